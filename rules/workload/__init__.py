"""The run as the engine sees it: every input resolved to a stated default (`setup`), the model's
shape (`shapes`) and what each training framework does by default (`frameworks`)."""
