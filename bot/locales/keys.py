"""Message keys the code builds at run time (f"arch.{family}", finding codes …), marked for Babel's extraction.

Babel finds a key where the code passes it literally to a lookup (babel.cfg lists those functions); a key
built from data is listed here instead, so `python -m bot.locales extract` writes a complete template.
The contract test fails when a catalog holds a key that neither the code nor this list names, so a key
the code stops using must leave this list too. Nothing imports this module; Babel reads it.
"""

from __future__ import annotations


def N_(key: str) -> str:
    """Mark a key for extraction (gettext's no-op convention); the key itself is returned."""
    return key


KEYS = (
    # bot/digest/commands.py: `code = "alert.off" if done else "alert.not_found"`
    N_("alert.not_found"), N_("alert.off"),
    # bot/render/formats.py Formatter.architecture: f"arch.{family}" (NVIDIA families; AMD names stay as they are)
    N_("arch.ada_lovelace"), N_("arch.ampere"), N_("arch.blackwell"), N_("arch.blackwell_ultra"),
    N_("arch.hopper"), N_("arch.kepler"), N_("arch.maxwell"), N_("arch.pascal"), N_("arch.turing"),
    N_("arch.volta"),
    # bot/render/formats.py: billing increments {1: "billing.second", 60: …} looked up by value
    N_("billing.hour"), N_("billing.minute"), N_("billing.second"),
    # bot/answer/advice.py: what-if buttons f"btn.{method}", f"btn.quant.{format}"
    N_("btn.full"), N_("btn.lora"), N_("btn.qlora"), N_("btn.quant.fp8"), N_("btn.quant.int4"),
    N_("btn.train.lora"),  # the same file: a run assumed, sized as a LoRA fine-tune instead
    # bot/answer/transcription.py: the closing line, by whether the model is one of Whisper's large ones
    N_("trans.tail"), N_("trans.tail_smaller"),
    # bot/answer/diffusion_run.py card_verdict: the named card's verdict, chosen by what its weights fit
    N_("diff.run.fits_all"), N_("diff.run.fits_offload"), N_("diff.run.fits_fp8_offload"), N_("diff.run.no"),
    # bot/digest/commands.py: f"cadence.{cadence}"
    N_("cadence.daily"), N_("cadence.weekly"),
    # bot/templates/blocks/clarification.json.j2: t("clarify." ~ v.kind)
    N_("clarify.gpu_ambiguous"), N_("clarify.model_ambiguous"),
    # bot/digest/texts.py delivery_error: f"delivery.{code}" for Slack error codes (else delivery.other)
    N_("delivery.account_inactive"), N_("delivery.app_uninstalled"),
    N_("delivery.channel_not_found"), N_("delivery.invalid_auth"), N_("delivery.is_archived"),
    N_("delivery.missing_scope"), N_("delivery.no_token"), N_("delivery.not_in_channel"),
    N_("delivery.other"), N_("delivery.restricted_action"), N_("delivery.token_revoked"),
    N_("delivery.user_not_found"),
    # bot/render/digest.py: f"digest.change.{kind}"
    N_("digest.change.drop"), N_("digest.change.gone"), N_("digest.change.new"),
    # bot/digest/commands.py: `code = "digest.off" if done else "digest.not_subscribed"`
    N_("digest.not_subscribed"), N_("digest.off"),
    # bot/templates/blocks/error.json.j2: t("error." ~ v.kind)
    N_("error.expired"), N_("error.generic"),
    # bot/render/advice.py: assumption labels f"field.{name}"
    N_("field.batch_size"), N_("field.cache_latents"), N_("field.concurrency"),
    N_("field.context_tokens"), N_("field.engine"), N_("field.epochs"), N_("field.family"),
    N_("field.frames"), N_("field.framework"), N_("field.gpus"), N_("field.grad_checkpointing"),
    N_("field.kv_cache_dtype"), N_("field.lora_rank"), N_("field.lora_targets"),
    N_("field.memory_basis"), N_("field.method"), N_("field.model"), N_("field.offload"),
    N_("field.optimizer"), N_("field.params_b"), N_("field.precision"), N_("field.quantization"),
    N_("field.recipe"), N_("field.resolution"), N_("field.samples"), N_("field.seq_len"),
    N_("field.sharding"), N_("field.spot"), N_("field.text_encoder_training"),
    # bot/render/findings.py coded_text: f"finding.{code}" for the rule engine's finding codes
    N_("finding.billing.hourly_short_run"), N_("finding.billing.per_second"),
    N_("finding.budget.none_within"), N_("finding.budget.over"), N_("finding.buy.vs_rent"),
    N_("finding.buy.vs_rent.short"), N_("finding.buy.vs_rent_within_job"), N_("finding.pinned.buy_one_street"),
    N_("finding.buy.within_budget_street"), N_("finding.command.not_available"),
    N_("finding.command.quantized_checkpoint"), N_("finding.cost.buy_vs_rent"),
    N_("finding.cost.purchase"), N_("finding.data.nvme"), N_("finding.deadline.miss"),
    N_("finding.deadline.none_meets"), N_("finding.deadline.assumed"), N_("finding.deadline.scaled_assumed"), N_("finding.pinned.method_fits"), N_("finding.command.speech"), N_("finding.serving.context_growth.short"), N_("rec.pinned.pass_cpu"), N_("rec.pinned.pass_nvme"), N_("cap.header"), N_("cap.header_named"), N_("cap.train.header"), N_("cap.train.header_named"), N_("finding.deadline.scaled"), N_("finding.speed.scaled"), N_("finding.fit.none"),
    N_("finding.gpu.unknown"), N_("finding.link.multinode"), N_("finding.link.nvlink_for_sharding"),
    N_("finding.link.bridge"), N_("finding.link.pcie"), N_("finding.link.pcie_tp"), N_("finding.link.pcie_many"), N_("finding.model.missing"),
    N_("finding.model.native_fp8"), N_("finding.model.native_mxfp4"), N_("finding.quant.native"),
    N_("quality.quant.native"), N_("finding.model.typical_shape"), N_("finding.offload.nvme"),
    N_("finding.offload.slow"), N_("finding.other"), N_("finding.pinned.more_gpus"),
    N_("finding.pinned.offload"), N_("finding.pinned.one_card"), N_("finding.pinned.quantized"),
    N_("finding.pinned.users"), N_("finding.pinned.context"), N_("finding.buy.within_budget"),
    N_("finding.buy.none_within"), N_("finding.pinned.buy_one"), N_("finding.plan.switch"),
    N_("finding.plan.switch.short"),
    N_("finding.plan.switches"), N_("finding.precision.fp8"), N_("finding.price.cluster"),
    N_("finding.price.no_cluster"), N_("finding.price.no_instance"), N_("finding.price.none"),
    N_("finding.price.pcie_instance"), N_("finding.price.whole_instance"),
    N_("finding.provision.adapter_one_card"), N_("finding.quant.4bit"), N_("finding.quant.fp8"),
    N_("finding.quant.gguf"), N_("finding.quant.int8"), N_("finding.quant.none"), N_("finding.quant.unsupported"),
    N_("finding.engine.unsupported"),
    N_("finding.rank.decided_by"), N_("finding.serving.concurrency_assumed"),
    N_("finding.serving.context_growth"), N_("finding.serving.target_missed"), N_("finding.serving.replicas"),
    N_("finding.spot.checkpoint"), N_("finding.stack.rocm"), N_("finding.time.not_estimated"), N_("finding.time.long"),
    N_("finding.training.unified"), N_("finding.serving.context_capped"),
    # bot/templates/blocks/help.json.j2: a list of example keys
    N_("help.example.advise"), N_("help.example.compare"), N_("help.example.fit"),
    N_("help.example.kb"), N_("help.example.price"),
    # bot/slack/notices.py _home_list: a title key passed in
    N_("home.alerts"), N_("home.subscriptions"),
    # bot/slack/listeners/home.py: bot.digest.texts.text(language, "home.problems") (key in 2nd place)
    N_("home.problems"),
    # bot/parse/notes.py: "ignored." + the reason a value was not used
    N_("ignored.budget_not_positive"), N_("ignored.budget_too_large"), N_("ignored.cpu_only"), N_("ignored.phone"),
    N_("ignored.count_not_positive"), N_("ignored.count_too_large"), N_("ignored.deadline_past"), N_("ignored.media_length"),
    N_("ignored.quantity_not_positive"), N_("ignored.size_absurd"),
    # bot/render/market.py, bot/render/digest.py: f"market.{kind}"
    N_("market.marketplace"), N_("market.on-demand"), N_("market.reserved"), N_("market.spot"),
    # bot/render/advice.py: memory breakdown rows f"mem.{part}"
    N_("mem.activations"), N_("mem.adapters"), N_("mem.gradients"), N_("mem.kv_cache"),
    N_("mem.logits"), N_("mem.optimizer"), N_("mem.overhead"), N_("mem.weights"),
    # templates p("method." ~ v.method); bot/render/findings.py f"method.{value}"
    N_("method.diffusion"), N_("method.full"), N_("method.inference"), N_("method.lora"),
    N_("method.pretrain"), N_("method.qlora"), N_("method.running"), N_("method.serving"),
    # bot/render/findings.py: f"precision.{precision}"
    N_("precision.awq"), N_("precision.gptq"), N_("precision.int4"), N_("precision.int8"),
    N_("precision.nf4"),
    # bot/render/serving.py: f"quality.{code}"
    N_("quality.quant.4bit"), N_("quality.quant.fp8"), N_("quality.quant.gguf"),
    N_("quality.quant.int8"), N_("quality.quant.none"),
    # bot/render/advice.py: `key = "rec.pinned.pass" if … else "rec.pinned.fail"`
    N_("rec.pinned.fail"), N_("rec.pinned.pass"),
    # bot/render/findings.py coded_text: f"reject.{code}" for the rule engine's rejection codes
    N_("reject.budget.over"), N_("reject.budget.over_per_hour"), N_("reject.deadline.miss"),
    N_("reject.fit.needs_more_gpus"), N_("reject.fit.tensor_parallel"), N_("reject.fit.vram"), N_("reject.fit.format"),
    N_("reject.link.no_fabric"), N_("reject.other"), N_("reject.segment.consumer_multinode"),
    # bot/render/rows.py: inside an f-string, which Babel cannot read on Python 3.11
    N_("row.group.prices"),
    # bot/render/formats.py: "segment." + segment
    N_("segment.consumer"), N_("segment.datacenter"), N_("segment.workstation"),
    # bot/render/serving.py: key = "srv.best.alternative" | "srv.best", and f"{key}_no_offer"
    N_("srv.best"), N_("srv.best.alternative"), N_("srv.best.alternative_no_offer"),
    N_("srv.best_no_offer"),
    # bot/render/findings.py, bot/render/advice.py: f"switch.{switch}"
    N_("switch.8bit_optimizer"), N_("switch.activation_offload"), N_("switch.cache_latents"),
    N_("switch.checkpointing"), N_("switch.chunked_loss"), N_("switch.context_parallel"),
    N_("switch.fp8_base"), N_("switch.micro_batch"), N_("switch.nvme_offload"),
    N_("switch.offload"), N_("switch.optimizer_in_backward"), N_("switch.paged_optimizer"),
    N_("switch.qlora"),
    # bot/render/digest.py: f"tier.{tier}"
    N_("tier.on-demand"), N_("tier.reserved"), N_("tier.spot"),
    # bot/render/findings.py, bot/render/advice.py: f"value.{name}.{value}"
    N_("value.constraint.budget"), N_("value.constraint.budget_per_hour"),
    N_("value.constraint.deadline"), N_("value.constraint.objective"),
    N_("value.grad_checkpointing.full"), N_("value.grad_checkpointing.none"),
    N_("value.grad_checkpointing.offloaded"), N_("value.grad_checkpointing.selective"),
    N_("value.price_basis.new"), N_("value.price_basis.used"), N_("value.price_basis.street"),
    N_("value.price_basis.street_on"),  # bot/render/findings.py coded_text: a street price with its date
    # bot/render/rows.py: f"value.street_{condition}"
    N_("value.street_new"), N_("value.street_used"),
    # bot/digest/commands.py: f"weekday.{n}", Monday = 0
    N_("weekday.0"), N_("weekday.1"), N_("weekday.2"), N_("weekday.3"), N_("weekday.4"),
    N_("weekday.5"), N_("weekday.6"),
    # bot/render/fits.py: f"compare.reason.{code}" (why the comparison verdict picks a GPU)
    N_("compare.reason.cheaper"), N_("compare.reason.faster"), N_("compare.reason.fewer_gpus"),
    N_("compare.reason.more_gpus"), N_("compare.reason.same"), N_("compare.reason.slower"),
    N_("compare.reason.unmeasured"),
    # bot/render/fits.py: f"compare.strength.{code}" (what each GPU leads in, without a workload)
    N_("compare.strength.cheapest_rent"), N_("compare.strength.fastest_memory"),
    N_("compare.strength.lowest_power"), N_("compare.strength.most_bf16"), N_("compare.strength.most_fp8"),
    N_("compare.strength.most_memory"), N_("compare.strength.newest"), N_("compare.strength.nvlink_only"),
    N_("compare.strength.only_fp8"),
    # bot/answer/commands.py: LanguageNotice(..., ("lang.set",) ...): keys passed in tuples
    N_("lang.auto.detect"), N_("lang.choices"), N_("lang.current.auto"),
    N_("lang.current.override"), N_("lang.invalid"), N_("lang.set"),
    # bot/render/findings.py, bot/render/advice.py: f"value.{name}.{value}" (engine terms in words: engine, family,
    # framework, memory basis, optimizer, recipe, sharding)
    N_("value.engine.exllama"), N_("value.engine.llama.cpp"), N_("value.engine.lmstudio"),
    N_("value.engine.mlx"), N_("value.engine.ollama"), N_("value.engine.sglang"),
    N_("value.engine.tensorrt-llm"), N_("value.engine.tgi"), N_("value.engine.transformers"),
    N_("value.engine.vllm"), N_("value.family.diffusion"), N_("value.framework.axolotl"),
    N_("value.framework.deepspeed"), N_("value.framework.hf"), N_("value.framework.llamafactory"),
    N_("value.framework.megatron"), N_("value.framework.torchtitan"), N_("value.framework.torchtune"),
    N_("value.framework.unsloth"), N_("value.memory_basis.allocated"), N_("value.memory_basis.reserved"),
    N_("value.optimizer.adafactor"), N_("value.optimizer.adamw"), N_("value.optimizer.adamw8bit"),
    N_("value.optimizer.lion"), N_("value.optimizer.paged_adamw"), N_("value.optimizer.paged_adamw8bit"),
    N_("value.optimizer.sgd"), N_("value.recipe.bf16"), N_("value.recipe.bf16_in_backward"),
    N_("value.recipe.fp32"), N_("value.recipe.fp32_in_backward"), N_("value.recipe.mixed"),
    N_("value.sharding.ddp"), N_("value.sharding.fsdp"), N_("value.sharding.layer_split"),
    N_("value.sharding.none"), N_("value.sharding.tensor_parallel"), N_("value.sharding.zero1"),
    N_("value.sharding.zero2"), N_("value.sharding.zero3"),
)
