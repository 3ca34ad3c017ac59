"""verl's reward loop backed by `corl serve` (POST /v1/samples). For verl 0.7.1 and later; read at v0.9.0.

verl scores one sample at a time: a reward worker runs `run_single` once per sample, all samples of
its chunk as concurrent asyncio tasks, and the agent loop sends each finished rollout to a random
reward worker. A group reward (a vote, a peer's vote) needs the K samples of a prompt, so each
sample is posted on its own with its group id and the group size, and `corl serve` forms the group;
each `run_single` returns once its group is complete and its supervisors have posted.

Select the manager by module path (nothing to register or import in your entry script):

    reward.reward_manager.source=importlib
    reward.reward_manager.name=CorlRewardManager
    reward.reward_manager.module.path=/abs/path/docs/integrations/verl_reward_loop.py
    +reward.reward_kwargs.corl.agent=agent-0
    +reward.reward_kwargs.corl.url=http://127.0.0.1:8470

(corl_client.py must sit beside this file.) Settings under reward.reward_kwargs.corl, else the
environment: agent (CORL_AGENT), url (CORL_SERVE_URL), token (CORL_SERVE_TOKEN), wait,
group_size (default actor_rollout_ref.rollout.n), id_key (default "index"), validation_splits.

- Group id: the problem's id from the data, never verl's uid (minted per process, different in
  every agent): extra_info[id_key] prefixed by extra_info["split"] when present (verl's example
  preprocessing writes both), else a hash of the raw prompt. The uid goes along as the rollout
  tag, so the K samples of one rollout form one group even when two epochs of a problem overlap.
- Step: run_single sees no step (the agent loop passes none), so the service counts rounds per
  group id: every agent must see the same problems in the same order.
- Lengths: the valid response token count is sent, so length-aware rewards read tokens, as in
  training. Validation samples (extra_info["split"] in validation_splits, default test/val/
  validation) never reach the exchange: they are scored by verl's compute_score (ground truth),
  as NaiveRewardManager would.

`compute_score` below is the lighter route (reward.custom_reward_function): verl hands it the
decoded text only, so lengths are characters (flagged by the service) and samples are grouped by
problem id alone; enough for a pointwise reward (a verifier).
"""

import asyncio
import inspect

from corl_client import AsyncCorlClient, new_request_id, prompt_text, reads_ground_truth, sample_body, stable_id

try:  # verl >= 0.7.1
    from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase
except Exception:  # noqa: BLE001 - no verl here (docs, tests): the same constructor contract

    class RewardManagerBase:
        def __init__(self, config, tokenizer, compute_score):
            self.config = config
            self.tokenizer = tokenizer
            self.compute_score = compute_score


__all__ = ["CorlRewardManager", "compute_score", "group_id"]

VALIDATION_SPLITS = ("test", "val", "validation")


def _get(obj, key, default=None):
    """A field of a DictConfig, a dict or an object, else the default."""
    if obj is None:
        return default
    if hasattr(obj, "get"):
        value = obj.get(key, default)
    else:
        value = getattr(obj, key, default)
    return default if value is None else value


def group_id(non_tensor, id_key="index"):
    """The exchange id of a sample's problem: "split/index" from extra_info, else a prompt hash."""
    extra = non_tensor.get("extra_info")
    extra = extra if isinstance(extra, dict) else {}
    if extra.get(id_key) is not None:
        split = extra.get("split")
        return "%s/%s" % (split, extra[id_key]) if split else str(extra[id_key])
    raw = non_tensor.get("raw_prompt")
    if raw is None:
        raise ValueError(
            "expected extra_info[%r] or raw_prompt in the sample to identify its problem across agents, got neither: "
            "add an id column to extra_info (verl's example preprocessing writes extra_info.index) or keep "
            "data.return_raw_chat=True" % (id_key,))
    return stable_id(prompt_text(list(raw) if not isinstance(raw, str) else raw))


class CorlRewardManager(RewardManagerBase):
    """A reward-loop manager posting each sample to `corl serve` for this trainer's agent.

    Constructed by verl as cls(config=, tokenizer=, compute_score=, reward_router_address=,
    reward_model_tokenizer=); the corl settings come from config.reward.reward_kwargs.corl.
    """

    def __init__(self, config, tokenizer, compute_score=None, reward_router_address=None,
                 reward_model_tokenizer=None, client=None, **_ignored):
        super().__init__(config, tokenizer, compute_score)
        import os

        corl = _get(_get(_get(config, "reward"), "reward_kwargs"), "corl", {})
        rollout = _get(_get(config, "actor_rollout_ref"), "rollout")
        self.agent = _get(corl, "agent") or os.environ.get("CORL_AGENT")
        if not self.agent:
            raise ValueError("expected the agent name (+reward.reward_kwargs.corl.agent=..., or $CORL_AGENT), got none")
        self.group_size = int(_get(corl, "group_size") or _get(rollout, "n", 0))
        if self.group_size < 1:
            raise ValueError("expected the group size (actor_rollout_ref.rollout.n or reward_kwargs.corl.group_size), got none")
        self.max_response_length = _get(rollout, "response_length")
        self.id_key = _get(corl, "id_key", "index")
        self.wait = _get(corl, "wait")
        self.validation_splits = tuple(_get(corl, "validation_splits", VALIDATION_SPLITS))
        self.client = client or AsyncCorlClient(_get(corl, "url"), token=_get(corl, "token"))
        self._reads_ground_truth = None

    async def run_single(self, data):
        data = data[-1:]  # a multi-turn sample: the reward is on its last sequence, as verl's own managers do
        item = data[0]
        responses = item.batch["responses"]
        width = responses.shape[-1]
        valid = int(item.batch["attention_mask"][-width:].sum())
        ids = responses[:valid]
        loop = asyncio.get_running_loop()
        text = await loop.run_in_executor(None, lambda: self.tokenizer.decode(ids, skip_special_tokens=True))
        nt = item.non_tensor_batch
        extra = nt.get("extra_info")
        if isinstance(extra, dict) and extra.get("split") in self.validation_splits:
            return await self._validation(nt, text)
        if self._reads_ground_truth is None:
            self._reads_ground_truth = reads_ground_truth(await self.client.health())
        reference = None
        if self._reads_ground_truth:
            reference = (nt.get("reward_model") or {}).get("ground_truth")
        truncated = self.max_response_length is not None and valid >= int(self.max_response_length)
        raw = nt.get("raw_prompt")
        body = sample_body(
            group_id(nt, self.id_key), self.group_size, text, tokens=valid,
            finish_reason="length" if truncated else "stop", rollout=nt.get("uid"), request_id=new_request_id(),
            prompt=prompt_text(list(raw)) if raw is not None and not isinstance(raw, str) else raw,
            reference=reference)
        answer = await self.client.post_sample(self.agent, body, wait=self.wait)
        return {
            "reward_score": float(answer["reward"]),
            # verl stacks these per key across the batch: every sample carries the same keys.
            "reward_extra_info": {
                "corl_labeled": 1.0 if answer.get("label") is not None else 0.0,
                "corl_fallback": 1.0 if answer.get("source") in ("self", "zero") else 0.0,
            },
        }

    async def _validation(self, nt, text):
        """A validation sample: verl's compute_score against the ground truth, never the exchange."""
        if self.compute_score is None:
            raise ValueError("expected verl's compute_score for validation samples, got none")
        kwargs = dict(data_source=nt.get("data_source"), solution_str=text,
                      ground_truth=(nt.get("reward_model") or {}).get("ground_truth"), extra_info=nt.get("extra_info"))
        if inspect.iscoroutinefunction(self.compute_score):
            result = await self.compute_score(**kwargs)
        else:
            result = await asyncio.get_running_loop().run_in_executor(None, lambda: self.compute_score(**kwargs))
        score = float(result["score"] if isinstance(result, dict) else result)
        return {"reward_score": score, "reward_extra_info": {"acc": score}}


_clients = {}


async def compute_score(data_source, solution_str, ground_truth, extra_info=None, agent=None, url=None, token=None,
                        group_size=None, id_key="index", wait=None, **_ignored):
    """verl custom reward function (reward.custom_reward_function.path=this file, name=compute_score).

    agent, url, group_size: from reward.custom_reward_function.reward_kwargs (verl merges them into
    the call), else $CORL_AGENT, $CORL_SERVE_URL, $CORL_GROUP_SIZE. Returns {"score", "corl_labeled"}.
    """
    import os

    agent = agent or os.environ.get("CORL_AGENT")
    size = int(group_size or os.environ.get("CORL_GROUP_SIZE") or 0)
    if not agent or size < 1:
        raise ValueError("expected reward_kwargs agent= and group_size= (or $CORL_AGENT, $CORL_GROUP_SIZE), got %r, %r"
                         % (agent, group_size))
    client = _clients.get((url, token))
    if client is None:
        client = _clients[(url, token)] = AsyncCorlClient(url, token=token)
    extra = extra_info if isinstance(extra_info, dict) else {}
    if extra.get(id_key) is None:
        raise ValueError("expected extra_info[%r] (a problem id shared by every agent), got none" % (id_key,))
    body = sample_body(group_id({"extra_info": extra}, id_key), size, solution_str, request_id=new_request_id(),
                       reference=None if ground_truth is None else str(ground_truth))
    if not reads_ground_truth(await client.health()):
        body.pop("reference", None)
    answer = await client.post_sample(agent, body, wait=wait)
    return {"score": float(answer["reward"]), "corl_labeled": 1.0 if answer.get("label") is not None else 0.0}
