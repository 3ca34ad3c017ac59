"""A TRL GRPOTrainer reward function backed by `corl serve` (POST /v1/groups).

    from trl import GRPOConfig, GRPOTrainer
    from trl_reward import CorlGroupReward

    reward = CorlGroupReward(url="http://127.0.0.1:8470", agent="a", group_size=8, id_column="id")
    trainer = GRPOTrainer(model=..., reward_funcs=[reward],
                          args=GRPOConfig(num_generations=8, per_device_train_batch_size=16, ...),
                          train_dataset=dataset)

TRL calls a reward function with `prompts`, `completions` (and `completion_ids`) plus every dataset
column as keyword arguments, one entry per completion, and wants one float per completion back.
TRL repeats each prompt `num_generations` times consecutively and hands each process a consecutive
slice of the batch, so the K completions of a prompt are K consecutive entries of one call *only if*
every per-process batch size is a multiple of K (per_device_train_batch_size, and the evaluation
batch size if evaluation scores with it). A call whose slice does not split into whole groups is
refused with a ValueError instead of voting over a partial group.

Only the standard library is needed (corl_client.py beside this file). Guide: docs/guide/serve.md.
"""

from corl_client import CorlClient, completion_text, prompt_text, stable_id

__all__ = ["CorlGroupReward", "split_groups"]


def split_groups(prompts, completions, group_size, ids=None):
    """Split per-completion lists into groups of `group_size` consecutive entries.

    Returns [(group_id, prompt, [texts], [positions])]. A group's entries must all show the same
    prompt (and id); the id is `ids[i]` when given, else a hash of the prompt text. An id repeated
    within one call (a prompt drawn twice) gets "#2", "#3", ... in order.
    """
    n = len(completions)
    if group_size < 1:
        raise ValueError("expected group_size >= 1 (GRPOConfig.num_generations), got %r" % (group_size,))
    if len(prompts) != n:
        raise ValueError("expected one prompt per completion (%d), got %d" % (n, len(prompts)))
    if ids is not None and len(ids) != n:
        raise ValueError("expected one id per completion (%d), got %d" % (n, len(ids)))
    if n % group_size:
        raise ValueError(
            "expected a multiple of group_size=%d completions in one call, got %d: make every per-process "
            "batch size a multiple of num_generations so that no prompt's group is split across processes"
            % (group_size, n))
    out = []
    seen = {}
    for start in range(0, n, group_size):
        texts = [prompt_text(p) for p in prompts[start:start + group_size]]
        gid = str(ids[start]) if ids is not None else stable_id(texts[0])
        for j in range(1, group_size):
            same_id = ids is None or str(ids[start + j]) == gid
            if texts[j] != texts[0] or not same_id:
                raise ValueError(
                    "expected completions %d..%d to share one prompt (a group of %d), got a different one at %d: "
                    "the batch is not in whole consecutive groups (check num_generations and the batch sizes)"
                    % (start, start + group_size - 1, group_size, start + j))
        count = seen.get(gid, 0) + 1
        seen[gid] = count
        out.append((gid if count == 1 else "%s#%d" % (gid, count), texts[0],
                    [completion_text(c) for c in completions[start:start + group_size]],
                    list(range(start, start + group_size))))
    return out


class CorlGroupReward:
    """Reward function for GRPOTrainer: posts each call's groups for one agent and one step.

    url            the service (default $CORL_SERVE_URL, else http://127.0.0.1:8470)
    agent          this trainer's agent name in the serve config
    group_size     GRPOConfig.num_generations (K)
    id_column      dataset column holding a problem id shared by every agent (needed when the agents
                   see differently phrased prompts); default: a hash of the prompt text
    reference_column  dataset column with the reference answer, sent when the served reward reads
                   ground truth
    step           "calls" (default): this function's call count, starting at start_step; every
                   agent must then call it equally often. "global_step": trainer_state.global_step
                   (survives resuming a checkpoint; needs one generation per optimizer step)
    wait           seconds a call waits for peers at most (default: the service's limit)
    client         a CorlClient to use instead of building one (token, timeout, retries)
    """

    def __init__(self, url=None, agent=None, group_size=None, id_column=None, reference_column=None,
                 step="calls", start_step=0, wait=None, client=None, token=None):
        if agent is None:
            raise ValueError("expected agent= (an agent name of the serve config), got None")
        if not isinstance(group_size, int) or group_size < 1:
            raise ValueError("expected group_size= (GRPOConfig.num_generations, an integer >= 1), got %r" % (group_size,))
        if step not in ("calls", "global_step"):
            raise ValueError('expected step="calls" or "global_step", got %r' % (step,))
        self.client = client or CorlClient(url, token=token)
        self.agent = agent
        self.group_size = group_size
        self.id_column = id_column
        self.reference_column = reference_column
        self.step_mode = step
        self.next_step = int(start_step)
        self.wait = wait
        # TRL names a reward function by __name__ in its logs.
        self.__name__ = "corl_%s" % (agent,)
        #: The service's answer to the latest call (groups, labels, metrics).
        self.last_answer = None

    def __call__(self, prompts, completions, **kwargs):
        ids = kwargs.get(self.id_column) if self.id_column else None
        if self.id_column and ids is None:
            raise ValueError("expected the dataset column %r (id_column) among the reward function's arguments, got %s"
                             % (self.id_column, sorted(kwargs)))
        groups = split_groups(prompts, completions, self.group_size, ids)
        refs = kwargs.get(self.reference_column) if self.reference_column else None
        posted = []
        for gid, prompt, texts, positions in groups:
            g = {"id": gid, "prompt": prompt, "completions": texts}
            if refs is not None and refs[positions[0]] is not None:
                g["reference"] = str(refs[positions[0]])
            posted.append(g)
        step = self._step(kwargs)
        answer = self.client.post_groups(self.agent, step, posted, wait=self.wait)
        self.last_answer = answer
        rewards = [0.0] * len(completions)
        for (_, _, _, positions), g in zip(groups, answer["groups"]):
            for pos, r in zip(positions, g["rewards"]):
                rewards[pos] = float(r)
        return rewards

    def _step(self, kwargs):
        if self.step_mode == "global_step":
            state = kwargs.get("trainer_state")
            if state is None or getattr(state, "global_step", None) is None:
                raise ValueError('expected trainer_state.global_step (step="global_step"), got none: this TRL version does not pass trainer_state; use step="calls"')
            return int(state.global_step)
        step = self.next_step
        self.next_step += 1
        return step
