"""What the trainers hand to corl's Python adapters, reduced to the parts the adapters touch, shaped
as the pinned sources build them (verl v0.9.0, TRL v1.9.0, OpenRLHF v0.11.0). Tensors are numpy
arrays (the adapters use only shape, slicing, sum and tolist, which torch tensors share)."""

import numpy as np

PAD, EOS = 0, 1


class Tokenizer:
    """A word tokenizer over a fixed vocabulary: id 0 pads, id 1 is the end-of-sequence token."""

    def __init__(self, vocab):
        self.words = ["<pad>", "</s>"] + sorted(set(vocab))
        self.ids = {w: i for i, w in enumerate(self.words)}
        self.eos_token_id = EOS

    def encode(self, text):
        return [self.ids[w] for w in text.split(" ")]

    def __len__(self):
        return len(self.words)

    def decode(self, ids, skip_special_tokens=False):
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        return " ".join(self.words[i] for i in ids if not (skip_special_tokens and i in (PAD, EOS)))

    def __call__(self, text, add_special_tokens=False, return_tensors=None):
        # transformers' call: {"input_ids": tensor [1, n]} (OpenRLHF takes ["input_ids"][0].tolist())
        return {"input_ids": np.array([self.encode(text)], dtype=np.int64)}


class DataProtoItem:
    def __init__(self, batch, non_tensor_batch, meta_info):
        self.batch = batch
        self.non_tensor_batch = non_tensor_batch
        self.meta_info = meta_info


class DataProto:
    """verl.protocol.DataProto: data[i] is a DataProtoItem (row tensors, row values), data[a:b] a DataProto."""

    def __init__(self, batch, non_tensor_batch, meta_info=None):
        self.batch = batch
        self.non_tensor_batch = non_tensor_batch
        self.meta_info = meta_info or {}

    def __len__(self):
        return len(next(iter(self.batch.values())))

    def __getitem__(self, item):
        if isinstance(item, slice):
            return DataProto({k: v[item] for k, v in self.batch.items()},
                             {k: v[item] for k, v in self.non_tensor_batch.items()}, self.meta_info)
        return DataProtoItem({k: v[item] for k, v in self.batch.items()},
                             {k: v[item] for k, v in self.non_tensor_batch.items()}, self.meta_info)


def streamed_sample(row, prompt_ids, response_ids, rollout_log_probs=None):
    """The one-sample DataProto the agent loop sends a reward worker (agent_loop.py _compute_score):
    unpadded prompt and response, an all-ones attention mask, the dataset row's fields, and the
    fields the agent loop adds. With rollout_log_probs: a row of the generated batch instead (what
    compute_rm_score hands the workers), which carries the rollout's log-probabilities."""
    input_ids = prompt_ids + response_ids
    batch = {
        "prompts": np.array([prompt_ids], dtype=np.int64),
        "responses": np.array([response_ids], dtype=np.int64),
        "attention_mask": np.ones((1, len(input_ids)), dtype=np.int64),
        "input_ids": np.array([input_ids], dtype=np.int64),
        "position_ids": np.arange(len(input_ids), dtype=np.int64)[None, :],
    }
    if rollout_log_probs is not None:
        batch["rollout_log_probs"] = np.array([rollout_log_probs], dtype=np.float32)
    non_tensor = {k: _objects([v]) for k, v in row.items()}
    non_tensor["__num_turns__"] = np.array([2])
    non_tensor["tool_extra_fields"] = _objects([{}])
    non_tensor["prompt_len"] = np.array([len(prompt_ids)])
    non_tensor["response_len"] = np.array([len(response_ids)])
    return DataProto(batch, non_tensor)


def _objects(values):
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


class TrainerState:
    """transformers.TrainerState, as far as reward functions read it."""

    def __init__(self, global_step):
        self.global_step = global_step


class GRPOTrainer:
    """The GRPOTrainer attributes a reward function can reach through the bound `log_metric`."""

    class _Accelerator:
        def __init__(self, index):
            self.process_index = index

    class _Model:
        def __init__(self, training):
            self.training = training

    def __init__(self, process_index, num_generations, num_generations_eval=None, training=True):
        self.accelerator = self._Accelerator(process_index)
        self.model = self._Model(training)
        self.num_generations = num_generations
        self.num_generations_eval = num_generations_eval
        self.state = TrainerState(0)
        self.metrics = {}
        self.extra = {}

    def _log_metric(self, name, value):
        self.metrics.setdefault(name, []).append(value)

    def _log_completion_extra(self, column, values):
        self.extra.setdefault(column, []).extend(values)


class SamplingParams:
    """vllm.SamplingParams, as far as OpenRLHF's executors read it."""

    def __init__(self, max_tokens=None, logprobs=None, temperature=1.0):
        self.max_tokens = max_tokens
        self.logprobs = logprobs
        self.temperature = temperature


class _Logprob:
    def __init__(self, logprob):
        self.logprob = logprob


class _CompletionOutput:
    def __init__(self, token_ids, text, finish_reason, logprobs):
        self.token_ids = token_ids
        self.text = text
        self.finish_reason = finish_reason
        self.logprobs = logprobs


class _RequestOutput:
    def __init__(self, output):
        self.outputs = [output]


class ScriptedEngine:
    """OpenRLHF's RolloutRayActor.generate(prompt_token_ids, sampling_params, multi_modal_data): each
    call for a prompt returns that prompt's next scripted completion, after `delay` seconds."""

    def __init__(self, tokenizer, scripts, delays):
        self.tokenizer = tokenizer
        self.scripts = {k: list(v) for k, v in scripts.items()}
        self.delays = {k: list(v) for k, v in delays.items()}

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        import asyncio

        prompt = self.tokenizer.decode(prompt_token_ids)
        text, finish = self.scripts[prompt].pop(0)
        await asyncio.sleep(self.delays[prompt].pop(0))
        ids = self.tokenizer.encode(text)[: sampling_params.max_tokens]
        if finish == "stop" and len(ids) < sampling_params.max_tokens:
            ids = ids + [EOS]
        logprobs = [{t: _Logprob(-0.5)} for t in ids] if sampling_params.logprobs is not None else None
        return _RequestOutput(_CompletionOutput(ids, self.tokenizer.decode(ids), finish, logprobs))


class Logprob:
    """vllm.sequence.Logprob: one reported token's log-probability, its rank and its text."""

    def __init__(self, logprob, rank=None, decoded_token=None):
        self.logprob = logprob
        self.rank = rank
        self.decoded_token = decoded_token


class BigramLM:
    """A language model small enough to hold its whole next-token distribution: seeded logits for each
    previous token over all V tokens, sampled at temperature 1 (where vLLM's raw and processed
    log-probabilities agree)."""

    def __init__(self, vocab_size, seed, scale=2.5):
        self.vocab_size = vocab_size
        self.logits = np.random.default_rng(seed).normal(0.0, scale, (vocab_size, vocab_size))

    def log_probs(self, prev):
        z = self.logits[prev]
        z = z - z.max()
        return z - np.log(np.exp(z).sum())


class LMEngine:
    """OpenRLHF's RolloutRayActor.generate over a BigramLM, answering as vLLM does: token_ids (the end
    token included when sampled), finish_reason, and with sampling_params.logprobs = k, per position a
    dict {token: Logprob} of the k most likely tokens and the sampled one (k = 0: the sampled one).
    `slot()` names the calling execute (a contextvar set by the driver); each call records there the
    exact statistics over the whole vocabulary of every generated position, and draws with a RNG
    seeded by the slot, so that what each execute samples does not depend on the order of the calls."""

    def __init__(self, lm, tokenizer, seed, slot):
        self.lm = lm
        self.tokenizer = tokenizer
        self.seed = seed
        self.slot = slot
        self.records = {}

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        import asyncio

        await asyncio.sleep(0)
        key = self.slot()
        rng = np.random.default_rng([self.seed, key])
        k = sampling_params.logprobs
        prev, ids, reported, exact = prompt_token_ids[-1], [], [], {"entropies": [], "mean_logprobs": [], "sampled": []}
        finish = "length"
        for _ in range(sampling_params.max_tokens):
            lp = self.lm.log_probs(prev)
            p = np.exp(lp)
            token = int(rng.choice(self.lm.vocab_size, p=p / p.sum()))
            exact["entropies"].append(float(-(p * lp).sum()))
            exact["mean_logprobs"].append(float(lp.mean()))
            exact["sampled"].append(float(lp[token]))
            if k is not None:
                order = np.argsort(-lp, kind="stable")
                ranks = {int(t): r + 1 for r, t in enumerate(order)}
                chosen = [int(t) for t in order[:k]] + ([token] if token not in order[:k] else [])
                reported.append({t: Logprob(float(lp[t]), ranks[t], self.tokenizer.words[t]) for t in chosen})
            ids.append(token)
            prev = token
            if token == EOS:
                finish = "stop"
                break
        exact["reported"] = [[c.logprob for c in d.values()] for d in reported]
        self.records[key] = exact
        return _RequestOutput(_CompletionOutput(ids, self.tokenizer.decode(ids), finish, reported if k is not None else None))
