"""slime's group reward backed by `corl serve` (POST /v1/samples). Read at slime v0.3.1.

With `--group-rm`, slime generates a prompt's whole group and then awaits the custom reward on it
(`slime/rollout/sglang_rollout.py` generate_and_rm_group, `slime/rollout/rm_hub` batched_async_rm:
`await custom_rm(args, samples)`), the groups of a rollout concurrently. `corl_group_rm` posts the
group's samples, with their response token counts, and returns one reward per sample:

    --group-rm --custom-rm-path slime_rm.corl_group_rm     # this folder on PYTHONPATH

slime loads the function by its import path, so its settings come from the environment:
CORL_AGENT (this job's agent), CORL_SERVE_URL, CORL_SERVE_TOKEN, and CORL_ID_KEY, the key of
`sample.metadata` holding a problem id shared by the agents (default "id"; without it, a hash of
the prompt). No step reaches a reward function, so the service counts rounds per problem: run
every agent over the same data in the same order.
"""

import os

from corl_client import AsyncCorlClient, new_request_id, prompt_text, reads_ground_truth, sample_body, stable_id

__all__ = ["corl_group_rm"]

_clients = {}


async def corl_group_rm(args, samples, **_ignored):
    """slime custom reward (--group-rm): the rewards of one prompt's group of samples."""
    agent = os.environ.get("CORL_AGENT")
    if not agent:
        raise ValueError("expected CORL_AGENT (this job's agent in the serve config) in the environment, got none")
    key = (os.environ.get("CORL_SERVE_URL"), os.environ.get("CORL_SERVE_TOKEN"))
    client = _clients.get(key)
    if client is None:
        client = _clients[key] = AsyncCorlClient(*key[:1], token=key[1])
    reads = reads_ground_truth(await client.health())
    id_key = os.environ.get("CORL_ID_KEY") or "id"
    first = samples[0]
    meta = first.metadata if isinstance(first.metadata, dict) else {}
    group = str(meta[id_key]) if meta.get(id_key) is not None else stable_id(prompt_text(first.prompt))
    truncated = getattr(type(first), "Status", None)
    bodies = []
    for i, s in enumerate(samples):
        finish = "length" if truncated is not None and s.status == truncated.TRUNCATED else "stop"
        bodies.append(sample_body(group, len(samples), s.response, tokens=s.response_length, finish_reason=finish,
                                  sample=i, request_id=new_request_id(), prompt=prompt_text(s.prompt),
                                  reference=s.label if reads and s.label is not None else None))
    answer = await client.post_samples(agent, bodies)
    return [float(a["reward"]) for a in answer["samples"]]
