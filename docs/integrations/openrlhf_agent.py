"""An OpenRLHF agent executor that scores each sample with `corl serve` (POST /v1/samples). Read at v0.11.0.

OpenRLHF's remote reward URL (POST /get_reward) sends text only, so corl can only count characters
for a length-aware reward. This executor generates exactly as OpenRLHF's single-turn executor does
and then posts the sample itself, with its generated token count, its finish reason, its group id
and the group size; `corl serve` forms the group of the prompt's samples (OpenRLHF generates them
concurrently) and answers each with its reward.

    python -m openrlhf.cli.train_ppo_ray ... --rollout.n_samples_per_prompt 8 --data.label_key id \\
        --train.agent_func_path /abs/path/docs/integrations/openrlhf_agent.py

OpenRLHF loads this file in each vLLM actor and builds `AgentExecutor()` with no arguments, so the
settings come from the environment of the Ray workers (ray job submit --runtime-env-json
'{"env_vars": {...}}', or exported before `ray start`): CORL_AGENT (this job's agent),
CORL_GROUP_SIZE (= --rollout.n_samples_per_prompt), CORL_SERVE_URL, CORL_SERVE_TOKEN, and
CORL_GROUP_BY: "label" (default: the --data.label_key column is a problem id shared by the agents)
or "prompt" (a hash of the prompt text). corl_client.py must sit beside this file.

Evaluation goes through the same executor: keep --eval.n_samples_per_prompt equal to
--rollout.n_samples_per_prompt and give evaluation rows ids of their own.
"""

import os
from copy import deepcopy

from corl_client import AsyncCorlClient, new_request_id, reads_ground_truth, sample_body, stable_id

try:  # OpenRLHF >= 0.10.2
    from openrlhf.utils.agent import AgentExecutorBase
except Exception:  # noqa: BLE001 - no OpenRLHF here (docs, tests): the same interface

    class AgentExecutorBase:
        pass


__all__ = ["AgentExecutor"]


class AgentExecutor(AgentExecutorBase):
    """Single-turn generation, then one POST /v1/samples per sample for this job's agent."""

    def __init__(self, client=None):
        self.agent = os.environ.get("CORL_AGENT")
        self.group_size = int(os.environ.get("CORL_GROUP_SIZE") or 0)
        self.group_by = os.environ.get("CORL_GROUP_BY") or "label"
        if not self.agent or self.group_size < 1:
            raise ValueError("expected CORL_AGENT and CORL_GROUP_SIZE (= --rollout.n_samples_per_prompt) in the "
                             "environment of the Ray workers, got %r and %r"
                             % (self.agent, os.environ.get("CORL_GROUP_SIZE")))
        if self.group_by not in ("label", "prompt"):
            raise ValueError('expected CORL_GROUP_BY to be "label" or "prompt", got %r' % (self.group_by,))
        self.client = client or AsyncCorlClient()
        self._reads_ground_truth = None

    async def execute(self, prompt, label, sampling_params, max_length, hf_tokenizer, llm_engine, images=None):
        if images:
            raise ValueError("expected a text prompt (this executor does not handle images), got %d image(s)" % len(images))
        prompt_ids = hf_tokenizer(text=prompt, add_special_tokens=False, return_tensors="pt")["input_ids"][0].tolist()
        params = sampling_params
        if sampling_params.max_tokens is None:
            params = deepcopy(sampling_params)
            params.max_tokens = max(1, max_length - len(prompt_ids))
        room = max_length - params.max_tokens
        if len(prompt_ids) > room:
            prompt_ids = prompt_ids[-room:]
        output = (await llm_engine.generate(prompt_ids, deepcopy(params), multi_modal_data=None)).outputs[0]
        action = list(output.token_ids)
        log_probs = None
        if sampling_params.logprobs is not None and output.logprobs is not None:
            log_probs = [0.0] * len(prompt_ids)
            for token, candidates in zip(action, output.logprobs):
                chosen = candidates.get(token)
                log_probs.append(chosen.logprob if chosen is not None else 0.0)
        text = hf_tokenizer.decode(action, skip_special_tokens=True)
        answer = await self._score(prompt, label, text, len(action), output.finish_reason)
        reward = float(answer["reward"])
        return {
            "prompt": prompt,
            "label": label,
            "images": images,
            "mm_train_inputs": None,
            "observation_tokens": prompt_ids + action,
            "action_ranges": [(len(prompt_ids), len(prompt_ids) + len(action))],
            "rollout_log_probs": log_probs,
            "truncated": output.finish_reason == "length",
            "reward": reward,
            "scores": min(1.0, max(0.0, reward)),
            "extra_logs": {
                "corl/labeled": 1.0 if answer.get("label") is not None else 0.0,
                "corl/fallback": 1.0 if answer.get("source") in ("self", "zero") else 0.0,
            },
        }

    async def _score(self, prompt, label, text, tokens, finish_reason):
        if self._reads_ground_truth is None:
            self._reads_ground_truth = reads_ground_truth(await self.client.health())
        if self.group_by == "label":
            if label is None:
                raise ValueError("expected a label (--data.label_key naming a problem id column) to group samples by, "
                                 "got none; or set CORL_GROUP_BY=prompt")
            group = str(label)
        else:
            group = stable_id(prompt)
        body = sample_body(group, self.group_size, text, tokens=tokens,
                           finish_reason=finish_reason if finish_reason in ("stop", "length") else None,
                           request_id=new_request_id(), prompt=prompt,
                           reference=str(label) if self._reads_ground_truth and label is not None else None)
        return await self.client.post_sample(self.agent, body)
