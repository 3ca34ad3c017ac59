"""Call reward functions exactly as TRL v1.9.0's GRPOTrainer does, without torch or TRL installed.

A transcription of what GRPOTrainer (trl/trainer/grpo_trainer.py at the v1.9.0 tag) does between
sampling and advantages, for custom (callable) reward functions:

- RepeatSampler(mini_repeat_count=num_generations) yields each dataset row num_generations times in a
  row, so `inputs` is the rows, each repeated G times (`_get_train_sampler`);
- `prompts = [x["prompt"] for x in inputs]`; `completions` are the decoded texts, or for a
  conversational prompt `[{"role": "assistant", "content": text}]` per completion
  (`_generate_and_score_completions`); `completion_ids` the generated token ids, one list each;
- `_calculate_rewards`: every column of the rows but "prompt", "completion" and "completion_ids"
  becomes a keyword argument listing its value per completion; `trainer_state` (transformers'
  TrainerState), `log_extra` and `log_metric` are added; a sync function is called as
  `reward_func(prompts=..., completions=..., completion_ids=..., **reward_kwargs)`, an async one is
  awaited on a daemon event loop (asyncio.gather over the async functions); None becomes NaN; the
  rewards are stored in a float32 tensor (rounded to float32 here).

Input (a JSON file, argv[1]): {"module", "functions": [names], "rows": [dataset rows],
"num_generations", "completions": [[text per generation] per row], "completion_ids": [[[ids]]],
"state": {TrainerState fields}}. Output (stdout): {"rewards_per_func": [[float or null per
function] per completion], "metrics": {name: [values]}, "extra": {column: [values]},
"received": [{argument: type name} per function]}.
"""

import asyncio
import dataclasses
import importlib.util
import inspect
import json
import math
import os
import struct
import sys
import threading
from collections import defaultdict


@dataclasses.dataclass
class TrainerState:
    """transformers.TrainerState's fields (transformers 4.x/5.x), as GRPOTrainer passes self.state."""

    epoch: float = None
    global_step: int = 0
    max_steps: int = 0
    logging_steps: int = 500
    eval_steps: int = 500
    save_steps: int = 500
    train_batch_size: int = None
    num_train_epochs: int = 0
    num_input_tokens_seen: int = 0
    total_flos: float = 0
    log_history: list = dataclasses.field(default_factory=list)
    best_metric: float = None
    best_global_step: int = None
    best_model_checkpoint: str = None
    is_local_process_zero: bool = True
    is_world_process_zero: bool = True
    is_hyper_param_search: bool = False
    trial_name: str = None
    trial_params: dict = None
    stateful_callbacks: list = None


def is_conversational(example):
    """trl.data_utils.is_conversational: a prompt that is a list of {"role", "content"} messages."""
    prompt = example.get("prompt")
    return isinstance(prompt, list) and len(prompt) > 0 and isinstance(prompt[0], dict) and "role" in prompt[0]


def float32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


class Trainer:
    """The parts of GRPOTrainer that reward functions see."""

    def __init__(self, reward_funcs, state):
        self.reward_funcs = reward_funcs
        self.state = state
        self._pending_metrics = defaultdict(list)
        self._pending_extra_logs = defaultdict(list)
        self.environments = None
        if any(inspect.iscoroutinefunction(f) for f in reward_funcs):
            self.async_loop = asyncio.new_event_loop()
            threading.Thread(target=self.async_loop.run_forever, daemon=True).start()

    def _log_completion_extra(self, column, values):
        self._pending_extra_logs[column].extend(values)

    def _log_metric(self, name, value):
        self._pending_metrics[name].append(value)

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = [[0.0] * len(self.reward_funcs) for _ in prompts]
        keys = [key for key in inputs[0] if key not in ["prompt", "completion", "completion_ids"]]
        reward_kwargs = {key: [example[key] for example in inputs] for key in keys}
        reward_kwargs["trainer_state"] = self.state
        reward_kwargs["log_extra"] = self._log_completion_extra
        reward_kwargs["log_metric"] = self._log_metric
        if self.environments is not None:
            reward_kwargs["environments"] = self.environments
        async_funcs_info = []
        for i, reward_func in enumerate(self.reward_funcs):
            if inspect.iscoroutinefunction(reward_func):
                async_funcs_info.append((i, reward_func))
            else:
                output = reward_func(
                    prompts=prompts, completions=completions, completion_ids=completion_ids_list, **reward_kwargs
                )
                output = [reward if reward is not None else math.nan for reward in output]
                if len(output) != len(prompts):  # torch: the slice assignment's shape check
                    raise RuntimeError("shape mismatch: %d rewards for %d completions" % (len(output), len(prompts)))
                for row, r in enumerate(output):
                    rewards_per_func[row][i] = float32(float(r))
        if async_funcs_info:

            async def _invoke_async(index, func):
                output = await func(
                    prompts=prompts, completions=completions, completion_ids=completion_ids_list, **reward_kwargs
                )
                return index, [r if r is not None else math.nan for r in output]

            async def _run_async_funcs():
                return await asyncio.gather(*[_invoke_async(i, f) for i, f in async_funcs_info])

            results = asyncio.run_coroutine_threadsafe(_run_async_funcs(), self.async_loop).result()
            for idx, output in results:
                for row, r in enumerate(output):
                    rewards_per_func[row][idx] = float32(float(r))
        return rewards_per_func


def main():
    job = json.load(open(sys.argv[1]))
    spec = importlib.util.spec_from_file_location("reward_under_test", job["module"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    received = []

    def spy(fn):
        def record(kwargs):
            received.append({k: type(v).__name__ for k, v in kwargs.items()})

        if inspect.iscoroutinefunction(fn):

            async def wrapped(**kwargs):
                record(kwargs)
                return await fn(**kwargs)
        else:

            def wrapped(**kwargs):
                record(kwargs)
                return fn(**kwargs)

        return wrapped

    funcs = [spy(getattr(module, name)) for name in job["functions"]]
    trainer = Trainer(funcs, TrainerState(**job.get("state", {})))
    g = job["num_generations"]
    inputs = [dict(row) for row in job["rows"] for _ in range(g)]  # RepeatSampler(mini_repeat_count=G)
    prompts = [x["prompt"] for x in inputs]
    texts = [t for row in job["completions"] for t in row]
    if is_conversational({"prompt": prompts[0]}):
        completions = [[{"role": "assistant", "content": t}] for t in texts]
    else:
        completions = texts
    completion_ids = [ids for row in job["completion_ids"] for ids in row]
    rewards = trainer._calculate_rewards(inputs, prompts, completions, completion_ids)
    json.dump(
        {
            "rewards_per_func": [[None if math.isnan(r) else r for r in row] for row in rewards],
            "metrics": dict(trainer._pending_metrics),
            "extra": dict(trainer._pending_extra_logs),
            "received": received,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
