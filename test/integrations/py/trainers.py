"""Drives corl's trainer adapters (docs/integrations) the way the pinned trainer sources load and call
them, against a running `corl serve`. Usage: /usr/bin/python3 -I trainers.py JOB.json (prints one JSON
document).

A job: {"integrations": dir, "url", "agent", "mode", ...}; each mode's fields are described in its
function. Every mode loads its adapter as its trainer does and nothing else: by file path (verl's
load_module, OpenRLHF's _load_agent_executor), by import_module of a module on the trainer's path
(slime), or from the user's own script folder (TRL); this driver never puts docs/integrations on
sys.path, and runs under -I (no PYTHONPATH, no user site, not even its own folder on sys.path). Every
mode reproduces its trainer's call: the same signature and argument types, the same batching (one
sample, a process's slice, one group) and the same concurrency."""

import asyncio
import functools
import importlib.util
import json
import multiprocessing
import os
import sys
import time

import numpy as np


def _own(name):
    """This driver's helper module beside it, by path (under -I its folder is not on sys.path)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                         name + ".py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


_stand_ins = _own("stand_ins")
GRPOTrainer, SamplingParams, ScriptedEngine = _stand_ins.GRPOTrainer, _stand_ins.SamplingParams, _stand_ins.ScriptedEngine
Tokenizer, TrainerState, streamed_sample = _stand_ins.Tokenizer, _stand_ins.TrainerState, _stand_ins.streamed_sample


def gate(job, who):
    """Test synchronisation, no part of any trainer: with job["gate"], say `who` is ready (the file
    GATE.WHO.ready) and wait until the test creates GATE, so that two agents' jobs start posting
    together whatever their start-up took (the interpreter, spawned workers). Nothing is timed."""
    path = job.get("gate")
    if not path:
        return
    with open("%s.%s.ready" % (path, who), "w"):
        pass
    while not os.path.exists(path):
        time.sleep(0.01)


def verl_load_extern_object(module_path, object_name):
    """verl v0.9.0 verl/utils/import_utils.py load_extern_object -> load_module(module_path) with no
    module_name: spec_from_file_location under the name custom_module_<hash of the absolute path>,
    exec_module, and nothing put in sys.modules or on sys.path."""
    spec = importlib.util.spec_from_file_location("custom_module_%d" % hash(os.path.abspath(module_path)), module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, object_name)


def openrlhf_load_agent_executor(agent_func_path):
    """OpenRLHF v0.11.0 openrlhf/trainer/ray/vllm_engine.py _load_agent_executor: a .py file under the
    module name "agent_module", its AgentExecutor class, which must subclass AgentExecutorBase, built
    with no arguments."""
    assert agent_func_path.endswith(".py")
    spec = importlib.util.spec_from_file_location("agent_module", agent_func_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    cls = module.AgentExecutor
    assert issubclass(cls, module.AgentExecutorBase)
    return cls()


def _verl_reward_worker(w, job, barrier, queue):
    """One verl RewardLoopWorker (a Ray actor: a process of its own). Its __init__ builds the manager
    as load_reward_manager does, the class loaded in this process by load_extern_object; then, per
    step, run_single on each sample the agent loop sends it, all as concurrent tasks."""
    cfg = job["config"]
    rm = cfg["reward"]["reward_manager"]
    assert rm["source"] == "importlib"
    tok = Tokenizer(job["vocab"])

    def ground_truth_score(data_source, solution_str, ground_truth, extra_info=None, **_):
        # verl's default compute_score for validation: 1 when the boxed answer equals the ground truth
        return 1.0 if ("\\boxed{%s}" % ground_truth) in solution_str else 0.0

    async def run():
        cls = verl_load_extern_object(rm["module"]["path"], rm["name"])
        assert "corl_client" not in sys.modules and not any(
            os.path.realpath(p or ".") == os.path.realpath(job["integrations"]) for p in sys.path)
        manager = cls(config=cfg, tokenizer=tok, compute_score=ground_truth_score, reward_router_address=None,
                      reward_model_tokenizer=None)
        # verl's RewardLoopWorker runs at most this many run_single calls at once (default: no bound here).
        limit = asyncio.Semaphore(job.get("concurrency") or 1 << 30)
        gate(job, "%s-%d" % (job.get("agent") or "job", w))
        for s, step in enumerate(job["steps"]):
            async def one(i, x):
                await asyncio.sleep(x["delay"])
                data = streamed_sample(x["row"], tok.encode(x["prompt"]), tok.encode(x["response"]) + [1],
                                       x.get("rollout_log_probs"))
                async with limit:
                    return i, await manager.run_single(data)
            mine = await asyncio.gather(*[one(i, x) for i, x in enumerate(step) if x["worker"] == w])
            queue.put(("result", s, [(i, json.loads(json.dumps(r, default=_plain))) for i, r in mine]))
            await asyncio.get_running_loop().run_in_executor(None, barrier.wait)

    try:
        asyncio.run(run())
    except BaseException as e:  # noqa: BLE001 - reported to the test
        queue.put(("error", w, "%s: %s" % (type(e).__name__, e)))
        barrier.abort()
    queue.put(("done", w, None))


def verl_loop(job):
    """verl v0.9.0 reward loop. job: {"config": verl config (reward.reward_manager.{source: importlib,
    name, module.path}, reward.reward_kwargs.corl, actor_rollout_ref.rollout.{n, response_length}),
    "vocab", "workers": W, "concurrency"?: run_single calls one worker runs at once,
    "steps": [[{"worker", "delay", "row", "prompt", "response"}]]}.

    Each reward worker is a fresh process (spawned, as Ray starts an actor: nothing of this driver's
    imports, the adapter loaded there by path), holding its own manager and event loop; the agent
    loop sends every finished sample to a worker, which runs run_single on it as one more concurrent
    task. Steps follow one another (the trainer waits for every reward of a step before the next)."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(job["workers"])
    queue = ctx.Queue()
    procs = [ctx.Process(target=_verl_reward_worker, args=(w, job, barrier, queue)) for w in range(job["workers"])]
    for p in procs:
        p.start()
    results = [[None] * len(s) for s in job["steps"]]
    errors = []
    done = 0
    while done < len(procs):
        kind, a, b = queue.get()
        if kind == "result":
            for i, r in b:
                results[a][i] = r
        elif kind == "error":
            errors.append(b)
        else:
            done += 1
    for p in procs:
        p.join()
    return {"results": results, "errors": errors}


def _plain(o):
    return o.tolist() if isinstance(o, np.ndarray) else str(o)


def verl_compute_score(job):
    """verl's NaiveRewardManager calling a custom async compute_score (reward.custom_reward_function,
    with reward_kwargs merged in): job {"module", "reward_kwargs", "samples": [{"delay", "data_source",
    "solution_str", "ground_truth", "extra_info"}]}, all samples concurrent."""
    raw = verl_load_extern_object(job["module"], "compute_score")
    fn = functools.partial(lambda f, kw, **k: f(**{**k, **kw}), raw, job["reward_kwargs"])

    async def one(x):
        await asyncio.sleep(x["delay"])
        return await fn(data_source=x["data_source"], solution_str=x["solution_str"], ground_truth=x["ground_truth"],
                        extra_info=dict(x["extra_info"], num_turns=None, rollout_reward_scores={}))

    async def run():
        return await asyncio.gather(*[one(x) for x in job["samples"]])

    return asyncio.run(run())


def trl_grpo(job):
    """TRL v1.9.0 GRPOTrainer._calculate_rewards in one process: job {"process_index", "num_generations",
    "reward": CorlReward kwargs, "steps": [{"global_step", "training", "inputs": [{"prompt", "completion",
    "completion_ids", columns...}]}]}: this process's slice of each generation batch. Run as a user's
    training script: trl_reward.py (alone) beside this file, imported from the script's own folder."""
    from trl_reward import CorlReward

    reward_func = CorlReward(**job["reward"])
    trainer = GRPOTrainer(job["process_index"], job["num_generations"], job.get("num_generations_eval"))
    out = []
    for step in job["steps"]:
        trainer.state = TrainerState(step["global_step"])
        trainer.model.training = step.get("training", True)
        inputs = step["inputs"]
        prompts = [x["prompt"] for x in inputs]
        completions = [x["completion"] for x in inputs]
        completion_ids_list = [x["completion_ids"] for x in inputs]
        keys = [key for key in inputs[0] if key not in ["prompt", "completion", "completion_ids"]]
        reward_kwargs = {key: [example[key] for example in inputs] for key in keys}
        reward_kwargs["trainer_state"] = trainer.state
        reward_kwargs["log_extra"] = trainer._log_completion_extra
        reward_kwargs["log_metric"] = trainer._log_metric
        rewards = reward_func(prompts=prompts, completions=completions, completion_ids=completion_ids_list,
                              **reward_kwargs)
        out.append({"rewards": [r if r is not None else None for r in rewards], "answer": reward_func.last_answer})
    return {"steps": out, "name": reward_func.__name__, "metrics": trainer.metrics}


def _trl_rollout_child(reward_func, groups, queue):
    """The AsyncGRPOTrainer rollout child: a spawned process that got the reward function pickled
    (so it imports trl_reward there, from the script's folder on the sys.path spawn hands it), and
    _score_group awaiting it on each whole group in turn."""
    import inspect

    async def score_loop():
        assert inspect.iscoroutinefunction(reward_func), "TRL awaits coroutine functions and threads the others"
        out = []
        for g in groups:
            n = len(g["completions"])
            kwargs = dict(completions=g["completions"], prompts=g["prompts"], completion_ids=g["completion_ids"],
                          **{k: [v] * n for k, v in g["columns"].items()})
            try:
                out.append({"rewards": await reward_func(**kwargs)})
            except ValueError as e:
                out.append({"value_error": str(e)})
        return out

    try:
        queue.put(("ok", asyncio.run(score_loop())))
    except BaseException as e:  # noqa: BLE001 - reported to the test
        queue.put(("error", "%s: %s" % (type(e).__name__, e)))


def trl_async(job):
    """TRL v1.9.0 AsyncGRPOTrainer: the reward function is pickled into the rollout child (spawn), and
    _score_group awaits it on each whole group, one group at a time, in finishing order. job
    {"reward": corl_group_reward keyword arguments, "groups": [{"prompts", "completions",
    "completion_ids", "columns": {name: value}}]} (columns repeated num_generations times, as the
    rollout loop builds reward_kwargs). Run as a user's script, trl_reward.py beside it."""
    from trl_reward import corl_group_reward

    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(target=_trl_rollout_child,
                        args=(functools.partial(corl_group_reward, **job["reward"]), job["groups"], queue))
    child.start()
    kind, value = queue.get()
    child.join()
    if kind == "error":
        raise RuntimeError("the rollout child failed: " + value)
    return value


def openrlhf_agent(job):
    """OpenRLHF v0.11.0 with --train.agent_func_path: the file's AgentExecutor() is built with no
    arguments, and generate_responses runs num_samples executes of a prompt concurrently; the prompts
    dispatched to one engine run concurrently too. job {"module", "vocab", "max_length", "max_tokens",
    "n", "prompts": [{"prompt", "label", "completions": [[text, finish]], "delays": [s]}]}."""
    tok = Tokenizer(job["vocab"])
    executor = openrlhf_load_agent_executor(job["module"])
    engine = ScriptedEngine(tok, {p["prompt"]: p["completions"] for p in job["prompts"]},
                            {p["prompt"]: p["delays"] for p in job["prompts"]})
    params = SamplingParams(max_tokens=job["max_tokens"], logprobs=None)

    async def generate_responses(p):
        return await asyncio.gather(*[
            executor.execute(prompt=p["prompt"], label=p["label"], sampling_params=params, max_length=job["max_length"],
                             hf_tokenizer=tok, llm_engine=engine, images=None)
            for _ in range(job["n"])
        ])

    async def run():
        return await asyncio.gather(*[generate_responses(p) for p in job["prompts"]])

    results = asyncio.run(run())
    return [[{k: r[k] for k in ("reward", "scores", "extra_logs", "truncated", "observation_tokens", "action_ranges")}
             for r in rs] for rs in results]


def openrlhf_agent_lm(job):
    """OpenRLHF v0.11.0's agent executor over a real (small) language model: as openrlhf_agent, the
    executor loaded by path and built with no arguments, num_samples executes per prompt concurrent,
    but the engine samples from a seeded bigram model over the whole tokenizer vocabulary and reports
    log-probabilities as vLLM does (LMEngine). OpenRLHF asks for none (logprobs=None, its default
    without --algo.advantage.is_correction_enable). job {"module", "vocab", "seed", "lm_seed",
    "max_length", "max_tokens", "n", "prompts": [{"prompt", "label"}]}. Each result carries the
    executor's answer and the exact statistics of what was sampled."""
    import contextvars

    tok = Tokenizer(job["vocab"])
    slot = contextvars.ContextVar("slot")
    engine = _stand_ins.LMEngine(_stand_ins.BigramLM(len(tok), job["lm_seed"]), tok, job["seed"], slot.get)
    executor = openrlhf_load_agent_executor(job["module"])
    params = SamplingParams(max_tokens=job["max_tokens"], logprobs=None)

    async def one(key, p):
        slot.set(key)
        r = await executor.execute(prompt=p["prompt"], label=p["label"], sampling_params=params,
                                   max_length=job["max_length"], hf_tokenizer=tok, llm_engine=engine, images=None)
        return {"reward": r["reward"], "rollout_log_probs": r["rollout_log_probs"],
                "tokens": r["action_ranges"][0][1] - r["action_ranges"][0][0], "exact": engine.records[key]}

    async def run():
        return await asyncio.gather(*[asyncio.gather(*[one(j * 1000 + i, p) for i in range(job["n"])])
                                      for j, p in enumerate(job["prompts"])])

    return asyncio.run(run())


def openrlhf_remote(job):
    """OpenRLHF v0.11.0 SingleTurnAgentExecutor._fetch_rewards_via_http with --reward.remote_url: one
    aiohttp POST {"query": [q], "prompts": [p], "labels": [l]} per sample (total timeout 180 s, 5
    tries), the samples of a prompt concurrent. job {"remote_url", "samples": [{"query", "prompt",
    "label", "delay"}]}."""
    import aiohttp

    timeout = aiohttp.ClientTimeout(total=180)

    async def post(x):
        await asyncio.sleep(x["delay"])
        payload = {"query": [x["query"]], "prompts": [x["prompt"]], "labels": [x["label"]]}
        for _ in range(5):
            try:
                async with aiohttp.ClientSession(timeout=timeout) as session:
                    async with session.post(job["remote_url"], json=payload) as response:
                        response.raise_for_status()
                        return await response.json()
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(1)
        return None

    async def run():
        return await asyncio.gather(*[post(x) for x in job["samples"]])

    return asyncio.run(run())


def slime_group_rm(job):
    """slime v0.3.1 with --group-rm --custom-rm-path slime_rm.corl_group_rm: load_function imports the
    module by its dotted path; each prompt's group is generated, then `await custom_rm(args, samples)`
    on the whole group, the groups of a rollout concurrently (generate_and_rm_group tasks).
    job {"groups": [{"delay", "samples": [{"prompt", "response", "response_length", "label",
    "metadata", "status"}]}]}."""
    import importlib
    from dataclasses import dataclass, field
    from enum import Enum

    @dataclass
    class Sample:  # slime.utils.types.Sample, the fields a reward reads
        class Status(Enum):
            PENDING = "pending"
            COMPLETED = "completed"
            TRUNCATED = "truncated"
            ABORTED = "aborted"
            FAILED = "failed"

        group_index: int = None
        index: int = None
        prompt: object = ""
        tokens: list = field(default_factory=list)
        response: str = ""
        response_length: int = 0
        label: str = None
        reward: object = None
        metadata: dict = field(default_factory=dict)
        status: "Sample.Status" = Status.PENDING
        rollout_log_probs: list = None

    # slime/utils/misc.py load_function: import_module of the dotted path's module (slime_rm.py alone
    # in a folder on the job's PYTHONPATH, as a Ray runtime env would set it), then the attribute.
    module_path, _, attr = "slime_rm.corl_group_rm".rpartition(".")
    custom_rm = getattr(importlib.import_module(module_path), attr)
    args = object()

    async def generate_and_rm_group(g, gi):
        await asyncio.sleep(g["delay"])
        group = [Sample(group_index=gi, index=gi * 100 + i, prompt=x["prompt"], response=x["response"],
                        response_length=x["response_length"], label=x["label"], metadata=x["metadata"],
                        status=Sample.Status[x["status"]], rollout_log_probs=x.get("rollout_log_probs"))
                 for i, x in enumerate(g["samples"])]
        return await custom_rm(args, group)

    async def run():
        return await asyncio.gather(*[generate_and_rm_group(g, gi) for gi, g in enumerate(job["groups"])])

    return asyncio.run(run())


def main():
    job = json.load(open(sys.argv[1]))
    for k, v in (job.get("env") or {}).items():
        os.environ[k] = v
    mode = job["mode"]
    fn = {"verl_loop": verl_loop, "verl_compute_score": verl_compute_score, "trl_grpo": trl_grpo,
          "trl_async": trl_async, "openrlhf_agent": openrlhf_agent, "openrlhf_agent_lm": openrlhf_agent_lm,
          "openrlhf_remote": openrlhf_remote,
          "slime_group_rm": slime_group_rm}[mode]
    here = os.path.realpath(job["integrations"])
    assert not any(os.path.realpath(p or ".") == here for p in sys.path), "docs/integrations is on sys.path"
    if mode != "verl_loop":  # verl's reward workers pass the gate each in its own process
        gate(job, job.get("agent") or (job.get("env") or {}).get("CORL_AGENT") or "job")
    out = fn(job)
    # Each adapter loaded alone: no corl_client module was imported to get there.
    assert "corl_client" not in sys.modules, "an adapter imported corl_client"
    json.dump(out, sys.stdout, default=_plain)


if __name__ == "__main__":
    main()
