"""TRL reward functions backed by `corl serve` (POST /v1/samples). Read at TRL v1.9.0.

GRPOTrainer: each process calls its reward functions on its own slice of the generation batch,
and a prompt's num_generations completions may span processes (trl#3896). `CorlReward` posts the
slice's completions as samples, each with its group id, its position in the group and the group
size; `corl serve` forms each group from every process's samples, so the per-device batch size
need not be a multiple of num_generations.

    from trl import GRPOConfig, GRPOTrainer
    from trl_reward import CorlReward

    reward = CorlReward(agent="agent-0", url="http://127.0.0.1:8470", id_column="id")
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], train_dataset=dataset,
                          args=GRPOConfig(num_generations=8, per_device_train_batch_size=4, seed=0))

AsyncGRPOTrainer (trl.experimental.async_grpo) calls each reward function on one whole group, in a
child process (so it must be picklable) and with no trainer state: use
`functools.partial(corl_group_reward, agent=..., id_column=...)`. It scores groups one at a time in
the order they finish, which differs between agents, so under a peer topology each agent would wait
on a group its peer has not reached: corl_group_reward refuses a peer topology unless asked
(`allow_peers=True`, then `wait` bounds each wait and the fallback answers).

Only the standard library is needed (corl_client.py beside this file). Guide: docs/guide/serve.md.
"""

import os

from corl_client import AsyncCorlClient, CorlClient, completion_text, new_request_id, prompt_text, sample_body, stable_id

__all__ = ["CorlReward", "corl_group_reward"]


def _ids(values, n, name):
    if values is None:
        return None
    if len(values) != n:
        raise ValueError("expected one %s per completion (%d), got %d" % (name, n, len(values)))
    return [None if v is None else str(v) for v in values]


class CorlReward:
    """GRPOTrainer reward function: posts this process's completions; the service forms the groups.

    agent            this trainer's agent name in the serve config
    url, token       the service (default $CORL_SERVE_URL, $CORL_SERVE_TOKEN)
    id_column        dataset column with a problem id shared by every agent (required when agents
                     see differently phrased prompts); default: a hash of the prompt text
    reference_column dataset column with the reference answer (sent when the served reward reads
                     ground truth)
    num_generations  the group size, when the trainer is not reachable through TRL's `log_metric`
                     argument (TRL passes it; the trainer gives num_generations, num_generations_eval,
                     the process index and train/eval mode)
    process_index    this process's index (default: the trainer's, else $RANK, else 0)
    wait             seconds a call waits for peers at most (default: the service's limit)

    Steps are trainer_state.global_step at generation; evaluation groups get ids prefixed "eval/"
    so that they never meet training groups.
    """

    def __init__(self, agent=None, url=None, token=None, id_column=None, reference_column=None,
                 num_generations=None, process_index=None, wait=None, client=None):
        if not agent:
            raise ValueError("expected agent= (an agent name of the serve config), got %r" % (agent,))
        self.agent = agent
        self.client = client or CorlClient(url, token=token)
        self.id_column = id_column
        self.reference_column = reference_column
        self.num_generations = num_generations
        self.process_index = process_index
        self.wait = wait
        # TRL names a reward function by __name__ in its logs.
        self.__name__ = "corl_%s" % (agent,)
        #: The service's answer to the latest call.
        self.last_answer = None

    def __call__(self, prompts, completions, completion_ids=None, trainer_state=None, log_metric=None, **columns):
        columns.pop("log_extra", None)
        columns.pop("environments", None)
        trainer = getattr(log_metric, "__self__", None)
        training = bool(getattr(getattr(trainer, "model", None), "training", True))
        size = self._size(trainer, training)
        index = self._process(trainer)
        if trainer_state is None or getattr(trainer_state, "global_step", None) is None:
            raise ValueError("expected trainer_state.global_step (TRL passes it to reward functions), got none")
        n = len(completions)
        if len(prompts) != n:
            raise ValueError("expected one prompt per completion (%d), got %d" % (n, len(prompts)))
        if completion_ids is not None and len(completion_ids) != n:
            raise ValueError("expected one completion_ids entry per completion (%d), got %d" % (n, len(completion_ids)))
        ids = _ids(columns.get(self.id_column) if self.id_column else None, n, "id (%s)" % self.id_column)
        if self.id_column and ids is None:
            raise ValueError("expected the dataset column %r (id_column) among the reward function's arguments, got %s"
                             % (self.id_column, sorted(columns)))
        refs = _ids(columns.get(self.reference_column) if self.reference_column else None, n, "reference")
        samples = []
        for i in range(n):
            position = index * n + i  # this completion's place in the whole generation batch
            problem = ids[i] if ids is not None else stable_id(prompt_text(prompts[i]))
            samples.append(sample_body(
                problem if training else "eval/%s" % (problem,), size, completion_text(completions[i]),
                tokens=len(completion_ids[i]) if completion_ids is not None else None, sample=position % size,
                prompt=prompt_text(prompts[i]), reference=refs[i] if refs is not None else None))
        answer = self.client.post_samples(self.agent, samples, step=trainer_state.global_step, wait=self.wait)
        self.last_answer = answer
        answers = answer["samples"]
        if log_metric is not None and answers:
            log_metric("corl/labeled_fraction", sum(a.get("label") is not None for a in answers) / len(answers))
            log_metric("corl/fallback_fraction", sum(a["source"] in ("self", "zero") for a in answers) / len(answers))
        return [float(a["reward"]) for a in answers]

    def _size(self, trainer, training):
        if trainer is not None and getattr(trainer, "num_generations", None):
            k = trainer.num_generations if training else (getattr(trainer, "num_generations_eval", None) or trainer.num_generations)
            return int(k)
        if self.num_generations:
            return int(self.num_generations)
        raise ValueError("expected num_generations= (the group size): this TRL passes no trainer through log_metric")

    def _process(self, trainer):
        if self.process_index is not None:
            return int(self.process_index)
        accelerator = getattr(trainer, "accelerator", None)
        if accelerator is not None:
            return int(accelerator.process_index)
        return int(os.environ.get("RANK", "0"))


_async_clients = {}


async def corl_group_reward(prompts, completions, completion_ids=None, *, agent, url=None, token=None, id_column=None,
                            reference_column=None, wait=None, allow_peers=False, **columns):
    """AsyncGRPOTrainer reward function: one whole group per call (the K completions of one prompt).

    Pass it bound with functools.partial (picklable, and TRL awaits it as a coroutine):
    functools.partial(corl_group_reward, agent="agent-0", url="http://127.0.0.1:8470", id_column="id").
    No step reaches it, so the service counts rounds per group id (the same data order in every agent).
    """
    key = (url, token)
    client = _async_clients.get(key)
    if client is None:
        client = _async_clients[key] = AsyncCorlClient(url, token=token)
    health = await client.health()
    peers = [m for m in (health.get("supervisors") or {}).get(agent, []) if m != agent]
    if peers and not allow_peers:
        raise ValueError(
            "expected a self or pointwise reward for AsyncGRPOTrainer, got agent %r supervised by %s: its scoring loop "
            "takes groups one at a time in finishing order, which differs between agents, so each would wait on a group "
            "its peer has not scored (pass allow_peers=True with a short wait to accept fallbacks)" % (agent, peers))
    n = len(completions)
    ids = _ids(columns.get(id_column) if id_column else None, n, "id (%s)" % id_column)
    if id_column and ids is None:
        raise ValueError("expected the dataset column %r (id_column), got %s" % (id_column, sorted(columns)))
    refs = _ids(columns.get(reference_column) if reference_column else None, n, "reference")
    problem = ids[0] if ids is not None else stable_id(prompt_text(prompts[0]))
    samples = [
        sample_body(problem, n, completion_text(c), tokens=len(completion_ids[i]) if completion_ids is not None else None,
                    sample=i, request_id=new_request_id(), prompt=prompt_text(prompts[i]),
                    reference=refs[i] if refs is not None else None)
        for i, c in enumerate(completions)
    ]
    answer = await client.post_samples(agent, samples, wait=wait)
    return [float(a["reward"]) for a in answer["samples"]]
