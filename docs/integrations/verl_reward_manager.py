"""A verl batch reward manager backed by `corl serve` (POST /v1/groups).

verl hands a reward manager the whole batch as a DataProto. The K responses of one prompt share
`non_tensor_batch["uid"]`; the batch may be reordered (sequence balancing), so responses are
grouped by uid, never by position. The uid is minted per trainer process and differs between the
agents of a cohort, so the id a group is exchanged under comes from the data instead: the
`extra_info["index"]` of the row when present (verl's example preprocessing writes it), else a
hash of the decoded prompt.

Everything but `CorlRewardManager.__call__` is plain Python over lists (`score_batch`), so this
module imports and is tested without verl, torch or numpy. The tensor glue in `__call__` decodes
prompts and responses with the tokenizer and puts each reward on the response's last valid token,
as verl's own managers do.

Selecting it (see docs/guide/serve.md, "verl"): importing this module registers the class as
"corl" when verl's reward-manager registry exists; select it with reward_model.reward_manager=corl
(or load the class by its module path where your verl version supports that), and give the
service's address by environment: CORL_SERVE_URL, CORL_AGENT, CORL_SERVE_TOKEN.
"""

import os

from corl_client import CorlClient, stable_id

__all__ = ["CorlRewardManager", "group_by_uid", "score_batch"]


def group_by_uid(uids):
    """Positions of each uid, in order of first appearance: [(uid, [positions])]."""
    order = []
    members = {}
    for i, uid in enumerate(uids):
        key = str(uid)
        if key not in members:
            members[key] = []
            order.append(key)
        members[key].append(i)
    return [(u, members[u]) for u in order]


def score_batch(client, agent, step, uids, prompts, responses, ids=None, references=None, wait=None):
    """Rewards for a batch given as parallel lists (one entry per response).

    uids        verl's non_tensor_batch["uid"]: responses with one uid form one group
    prompts     the decoded prompt of each response
    responses   the decoded response texts
    ids         optional stable problem id per response (shared by all agents); default: a hash
                of the prompt. Ids repeated by different uids get "#2", "#3", ... in order of
                first appearance.
    references  optional reference answer per response (sent when the served reward reads
                ground truth)

    Returns (rewards aligned with the inputs, extra_info: {name: [value per response]}, answer).
    """
    n = len(responses)
    for name, xs in (("uids", uids), ("prompts", prompts), ("ids", ids), ("references", references)):
        if xs is not None and len(xs) != n:
            raise ValueError("expected %s to have one entry per response (%d), got %d" % (name, n, len(xs)))
    groups = group_by_uid(uids)
    posted = []
    seen = {}
    for uid, positions in groups:
        first = positions[0]
        base = str(ids[first]) if ids is not None and ids[first] is not None else stable_id(prompts[first])
        count = seen.get(base, 0) + 1
        seen[base] = count
        g = {"id": base if count == 1 else "%s#%d" % (base, count), "prompt": prompts[first],
             "completions": [responses[i] for i in positions]}
        if references is not None and references[first] is not None:
            g["reference"] = str(references[first])
        posted.append(g)
    answer = client.post_groups(agent, step, posted, wait=wait)
    rewards = [0.0] * n
    labeled = [0.0] * n
    fallback = [0.0] * n
    for (_, positions), g in zip(groups, answer["groups"]):
        for pos, r in zip(positions, g["rewards"]):
            rewards[pos] = float(r)
            labeled[pos] = 1.0 if g.get("label") is not None else 0.0
            fallback[pos] = 1.0 if g.get("source") in ("self", "zero") else 0.0
    extra = {"corl_labeled": labeled, "corl_fallback": fallback}
    return rewards, extra, answer


class CorlRewardManager:
    """verl reward manager: one POST /v1/groups per batch, for this trainer's agent.

    Constructed by verl with the tokenizer (and num_examine, compute_score, reward_fn_key and any
    reward_kwargs, accepted and ignored where corl has no use for them). Extra keyword arguments:
    url, agent, token, wait, id_key (the extra_info field holding a stable problem id).
    """

    def __init__(self, tokenizer=None, num_examine=0, compute_score=None, reward_fn_key="data_source",
                 url=None, agent=None, token=None, wait=None, id_key="index", client=None, **_ignored):
        self.tokenizer = tokenizer
        self.num_examine = num_examine
        self.agent = agent if agent is not None else os.environ.get("CORL_AGENT")
        if not self.agent:
            raise ValueError("expected the agent name (agent= in reward_kwargs, or $CORL_AGENT), got none")
        self.client = client or CorlClient(url, token=token)
        self.wait = wait
        self.id_key = id_key
        self.calls = 0
        self.last_answer = None

    def step_of(self, meta_info):
        """The exchange step: verl's meta_info["global_steps"] when present, else the call count."""
        step = (meta_info or {}).get("global_steps")
        if step is None:
            step = self.calls
        self.calls += 1
        return int(step)

    def __call__(self, data, return_dict=False):
        import torch  # verl's dependency; this module stays importable without it

        prompt_ids = data.batch["prompts"]
        response_ids = data.batch["responses"]
        mask = data.batch["attention_mask"]
        prompt_len = prompt_ids.shape[-1]
        nt = data.non_tensor_batch
        prompts, responses, last = [], [], []
        for i in range(len(data)):
            p_valid = int(mask[i][:prompt_len].sum())
            r_valid = int(mask[i][prompt_len:].sum())
            prompts.append(self.tokenizer.decode(prompt_ids[i][-p_valid:] if p_valid else prompt_ids[i][:0], skip_special_tokens=True))
            responses.append(self.tokenizer.decode(response_ids[i][:r_valid], skip_special_tokens=True))
            last.append(max(r_valid - 1, 0))
        extra_info = nt.get("extra_info")
        ids = None
        if extra_info is not None:
            ids = [e.get(self.id_key) if isinstance(e, dict) else None for e in extra_info]
            if all(x is None for x in ids):
                ids = None
        references = None
        if self.client.supervised() and "reward_model" in nt:
            references = [rm.get("ground_truth") if isinstance(rm, dict) else None for rm in nt["reward_model"]]
        rewards, extra, answer = score_batch(self.client, self.agent, self.step_of(getattr(data, "meta_info", None)),
                                             list(nt["uid"]), prompts, responses, ids, references, self.wait)
        self.last_answer = answer
        reward_tensor = torch.zeros_like(response_ids, dtype=torch.float32)
        for i, r in enumerate(rewards):
            reward_tensor[i, last[i]] = r
        if return_dict:
            return {"reward_tensor": reward_tensor, "reward_extra_info": extra}
        return reward_tensor


try:  # register under verl's reward-manager registry when verl is installed
    from verl.workers.reward_manager import register as _register
except Exception:  # noqa: BLE001 - no verl (tests, docs) or a verl without the registry
    _register = None
if _register is not None:
    try:
        CorlRewardManager = _register("corl")(CorlRewardManager)
    except Exception:  # noqa: BLE001 - already registered (module imported twice)
        pass
