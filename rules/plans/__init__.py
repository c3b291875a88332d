"""From a workload to ranked plans: the smallest fitting setup per GPU (`fit`), one search pass over a
pool (`search`), ranking by objective (`ranking`), notable rejects, guidance findings and the tier."""
