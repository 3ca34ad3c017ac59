"""corl's host for a Python reward function (the `corl:python` reward plugin). Standard library only.

corl starts it once per plugin instance as

    <python> host.py '<setup JSON>'

and keeps it for the whole run. It imports the researcher's module, then answers requests until its
stdin closes. The setup JSON: {"module": a .py path or a dotted module name, "function": name,
"signature": "trl" | "verl", "withheld": [parameter names a label-free run never passes]}.

Framing (docs/guide/python-rewards.md, "The pipe"): UTF-8 JSON objects, one per line ("\\n"), on the
host's original stdin (requests) and stdout (answers). JSON text never holds a raw newline, so a line
is a message. Before the module is imported both descriptors are moved out of the way: file
descriptor 0 becomes /dev/null (a function that reads stdin reads nothing) and 1 becomes a copy of 2
(whatever the function prints, from Python or from C, goes to stderr), so nothing the function does
with stdin or stdout can touch the pipe. A process the function forks closes its copies of the pipe
at once and, should it return into this loop, exits without a word.

    host  -> corl  {"hello": {"python": "3.11.2"}}  (the interpreter runs the host; nothing imported yet)
    host  -> corl  {"ready": {"function": "reward.reward_func", "async": false, "python": "3.11.2"}}
                   or {"fatal": ERROR} (import failed, no such function, a parameter never passed)
    corl  -> host  {"id": 1, "calls": [CALL, ...]}
    host  -> corl  {"id": 1, "results": [RESULT, ...]}  or  {"id": 1, "error": ERROR, "call": i}

ERROR is {"kind", "type", "message", "where", "last"}: `last` is the traceback's last line and
`where` the innermost frame in the researcher's own code; the whole traceback goes to stderr.

A TRL CALL is {"seed", "state": {"global_step", "max_steps"}, "context": {...}, "groups": [GROUP]}
with GROUP {"prompt", "completions", "completion_ids", "columns": {name: value per group},
"per_completion": {name: [value per completion]}}; the function is called as TRL's GRPOTrainer calls
it: reward_func(prompts=..., completions=..., completion_ids=..., <columns>, trainer_state=...,
log_extra=..., log_metric=...), every column a list with one entry per completion, prompts repeated
once per completion. Its RESULT is {"rewards": [number or null], "metrics": {name: [values]},
"extra": {column: [values]}}.

A verl CALL is {"seeds": [one per sample], "samples": [{"data_source", "solution_str", "ground_truth",
"extra_info"}]};
compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...) runs once per
sample, and the RESULT is {"scores": [number], "extra": [{name: number}]}.

Before each call `random` (and numpy's global generator, if the module imported numpy) is seeded
from the call's "seed" (verl: the sample's), so a function that draws random numbers gives the same rewards for the same
inputs.
"""

import sys

if sys.version_info < (3, 8):
    sys.stderr.write("corl's Python host needs Python 3.8 or later, got %s\n" % sys.version.split()[0])
    sys.exit(2)

import asyncio  # noqa: E402 - after the version check
import hashlib
import importlib
import importlib.util
import inspect
import json
import math
import numbers
import os
import random
import traceback
import types

HOST_PID = os.getpid()
MAX_TEXT = 2000


def _move_pipe():
    """Keep the pipe on private descriptors; give the function /dev/null for stdin and stderr for stdout."""
    proto_in = os.dup(0)
    proto_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return os.fdopen(proto_in, "rb", buffering=1 << 16), os.fdopen(proto_out, "wb", buffering=1 << 16)


PIPE_IN, PIPE_OUT = _move_pipe()


def _after_fork_in_child():
    # A forked child (os.fork, multiprocessing) must never read or write the pipe.
    for f in (PIPE_IN, PIPE_OUT):
        try:
            os.close(f.fileno())
        except OSError:
            pass


os.register_at_fork(after_in_child=_after_fork_in_child)


def _leave_if_forked():
    if os.getpid() != HOST_PID:
        os._exit(0)


def send(message):
    _leave_if_forked()
    PIPE_OUT.write(json.dumps(message, allow_nan=False, separators=(",", ":")).encode("utf-8") + b"\n")
    PIPE_OUT.flush()


def clip(text):
    text = str(text)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 20] + "... (%d characters)" % len(text)


class CallError(Exception):
    """A call that cannot be answered: kind is "output" (a wrong return) or "call" (a wrong call)."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def _user_frame(frames, module_file):
    """The innermost frame in the researcher's folder, else the innermost one outside this host."""
    here = os.path.abspath(__file__)
    folder = os.path.dirname(module_file) + os.sep if module_file else None
    outside = [f for f in frames if not f.filename.startswith("<") and os.path.abspath(f.filename) != here]
    mine = [f for f in outside if folder and os.path.abspath(f.filename).startswith(folder)]
    return (mine or outside or [None])[-1]


def _without_host(tb):
    """The traceback from the first frame that is not this host's (the researcher's call onwards)."""
    here = os.path.abspath(__file__)
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) == here:
        tb = tb.tb_next
    return tb


def error_of(exc, kind, module_file=None):
    """An ERROR object for an exception; prints its traceback (from the researcher's code on) to stderr."""
    text = "".join(traceback.format_exception(type(exc), exc, _without_host(exc.__traceback__)))
    sys.stderr.write(text)
    sys.stderr.flush()
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    frames = traceback.extract_tb(exc.__traceback__)
    frame = _user_frame(frames, module_file)
    where = "%s:%d in %s" % (frame.filename, frame.lineno, frame.name) if frame else ""
    if isinstance(exc, SyntaxError) and exc.filename:
        where = "%s:%s" % (exc.filename, exc.lineno)
    return {"kind": kind, "type": type(exc).__name__, "message": clip(exc), "where": where, "last": clip(last)}


def plain_error(kind, message):
    return {"kind": kind, "type": "", "message": clip(message), "where": "", "last": clip(message)}


def load_function(setup):
    """Import the module and find the function; returns (function, module file or None)."""
    module = setup["module"]
    if module.endswith(".py"):
        path = os.path.abspath(module)
        folder = os.path.dirname(path)
        sys.path.insert(0, folder)
        stem = os.path.splitext(os.path.basename(path))[0]
        name = stem if stem.isidentifier() and stem not in sys.modules else "corl_reward_" + str(abs(hash(path)))
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise CallError("import", "cannot import %s: not a Python source file" % path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        module_file = path
    else:
        sys.path.insert(0, os.getcwd())
        mod = importlib.import_module(module)
        module_file = os.path.abspath(getattr(mod, "__file__", "") or "") or None
    fn = getattr(mod, setup["function"], None)
    if fn is None or not callable(fn):
        defined = sorted(
            k for k, v in vars(mod).items() if callable(v) and not k.startswith("_") and not isinstance(v, type)
            and getattr(v, "__module__", None) == mod.__name__
        )
        what = "no attribute %r" % setup["function"] if fn is None else "%r, which is not callable" % setup["function"]
        raise CallError(
            "function",
            "module %s has %s (its functions: %s)" % (mod.__name__, what, ", ".join(defined) or "none"),
        )
    return fn, module_file


def check_parameters(fn, setup):
    """Refuse a function that requires a parameter corl never passes (e.g. the reference in a label-free run)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    required = [
        p.name
        for p in sig.parameters.values()
        if p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    withheld = [n for n in required if n in setup.get("withheld", [])]
    if withheld:
        raise CallError(
            "withheld",
            "%s requires %s, which corl passes only when the config sets groundTruth: true"
            % (getattr(fn, "__name__", "the function"), ", ".join(repr(n) for n in withheld)),
        )
    return sig


def accepts_all(sig):
    return sig is None or any(p.kind == inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())


def keyword_subset(sig, kwargs):
    """Every keyword when the function takes **kwargs, else those it names (TRL passes all; corl adds more)."""
    if accepts_all(sig):
        return kwargs
    names = {
        p.name
        for p in sig.parameters.values()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    return {k: v for k, v in kwargs.items() if k in names}


def seed_generators(seed):
    random.seed(seed)
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed(int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:4], "little"))
        except Exception:
            pass


def as_number(value, what, allow_none):
    """A finite float from a reward (bools and numpy/torch scalars included), None to abstain where allowed."""
    if value is None:
        if allow_none:
            return None
        raise CallError("output", "%s is None: return a number" % what)
    wanted = "a number or None" if allow_none else "a number"
    if isinstance(value, (str, bytes)):
        raise CallError("output", "%s is %s (%s): return %s" % (what, clip(repr(value))[:80], type(value).__name__, wanted))
    if not isinstance(value, numbers.Real):
        try:
            value = float(value)  # numpy and torch 0-d values
        except Exception:
            raise CallError("output", "%s is %s (%s): return %s"
                            % (what, clip(repr(value))[:80], type(value).__name__, wanted))
    try:
        number = float(value)
    except OverflowError:  # an int beyond a float's range
        number = math.inf if value > 0 else -math.inf
    if not math.isfinite(number):
        raise CallError("output", "%s is %r: return a finite number%s"
                        % (what, number, ", or None to abstain" if allow_none else ""))
    return number


class TrainerState:
    """The fields of transformers.TrainerState that a reward function can use in corl."""

    def __init__(self, global_step, max_steps):
        self.global_step = global_step
        self.max_steps = max_steps
        self.epoch = None
        self.is_world_process_zero = True
        self.is_local_process_zero = True

    def __repr__(self):
        return "TrainerState(global_step=%r, max_steps=%r)" % (self.global_step, self.max_steps)


def trl_kwargs(call, conversational):
    """TRL's keyword arguments for one call, and the recorders of log_metric and log_extra."""
    prompts, completions, completion_ids = [], [], []
    columns = {}
    n = sum(len(g["completions"]) for g in call["groups"])
    offset = 0
    for g in call["groups"]:
        k = len(g["completions"])
        prompt = g["prompt"]
        for i in range(k):
            prompts.append([{"role": "user", "content": prompt}] if conversational else prompt)
            text = g["completions"][i]
            completions.append([{"role": "assistant", "content": text}] if conversational else text)
            ids = g["completion_ids"]
            completion_ids.append(ids[i] if ids is not None else None)
        for name, value in g["columns"].items():
            columns.setdefault(name, [None] * n)[offset:offset + k] = [value] * k
        for name, values in g["per_completion"].items():
            columns.setdefault(name, [None] * n)[offset:offset + k] = values
        offset += k
    metrics = {}
    extra = {}

    def log_metric(name, value):
        metrics.setdefault(str(name), []).append(as_number(value, "log_metric(%r) value" % (name,), False))

    def log_extra(column, values):
        values = list(values)
        if len(values) != n:
            raise CallError("output", "log_extra(%r) got %d values, expected one per completion (%d)"
                            % (column, len(values), n))
        extra.setdefault(str(column), []).extend(values)

    kwargs = dict(columns)
    kwargs.update(
        prompts=prompts,
        completions=completions,
        completion_ids=completion_ids,
        trainer_state=TrainerState(call["state"]["global_step"], call["state"]["max_steps"]),
        log_extra=log_extra,
        log_metric=log_metric,
        corl=types.SimpleNamespace(**call["context"]),
    )
    return kwargs, n, metrics, extra


def trl_result(output, n, metrics, extra):
    if isinstance(output, (str, bytes, dict)) or not hasattr(output, "__iter__"):
        raise CallError("output", "expected a list of %d rewards (one per completion, None to abstain), got %s"
                        % (n, type(output).__name__))
    count = len(output) if hasattr(output, "__len__") else None
    if count is not None and count != n:
        raise CallError("output", "expected %d rewards (one per completion, None to abstain), got %d" % (n, count))
    rewards = []
    for i, r in enumerate(output):
        if i >= n:
            raise CallError("output", "expected %d rewards (one per completion, None to abstain), got more" % n)
        rewards.append(as_number(r, "reward %d" % i, True))
    if len(rewards) != n:
        raise CallError("output", "expected %d rewards (one per completion, None to abstain), got %d"
                        % (n, len(rewards)))
    kept = {}
    for column, values in extra.items():
        try:
            json.dumps(values, allow_nan=False)
            kept[column] = values
        except (TypeError, ValueError):
            kept[column] = [clip(repr(v)) for v in values]
    return {"rewards": rewards, "metrics": metrics, "extra": kept}


def verl_result(output, i):
    extra = {}
    if isinstance(output, dict):
        if "score" not in output:
            raise CallError("output", "sample %d: expected a number or a dict with \"score\", got a dict with keys %s"
                            % (i, ", ".join(map(repr, list(output)[:8]))))
        score = as_number(output["score"], "sample %d's score" % i, False)
        for key, value in output.items():
            if key == "score":
                continue
            if isinstance(value, (bool, numbers.Real)) and math.isfinite(float(value)):
                extra[str(key)] = float(value)
    else:
        score = as_number(output, "sample %d's score" % i, False)
    return score, extra


class Host:
    def __init__(self, fn, sig, setup, module_file):
        self.fn = fn
        self.sig = sig
        self.setup = setup
        self.module_file = module_file
        self.loop = asyncio.new_event_loop()
        self.conversational = setup.get("format") == "conversational"

    def invoke(self, kwargs):
        """Call the function (sync or async: an awaitable is run to completion on the host's loop)."""
        if self.sig is not None and not accepts_all(self.sig):
            kwargs = keyword_subset(self.sig, kwargs)
            try:
                self.sig.bind(**kwargs)
            except TypeError as e:
                raise CallError("call", "%s cannot take corl's arguments: %s" % (self.fn.__name__, e))
        output = self.fn(**kwargs)
        _leave_if_forked()
        if inspect.isawaitable(output):
            output = self.loop.run_until_complete(output)
            _leave_if_forked()
        return output

    def run_trl(self, call):
        kwargs, n, metrics, extra = trl_kwargs(call, self.conversational)
        seed_generators(call["seed"])
        output = self.invoke(kwargs)
        return trl_result(output, n, metrics, extra)

    def run_verl(self, call):
        scores, extras = [], []
        for i, sample in enumerate(call["samples"]):
            seed_generators(call["seeds"][i])
            output = self.invoke(dict(sample))
            score, extra = verl_result(output, i)
            scores.append(score)
            extras.append(extra)
        return {"scores": scores, "extra": extras}

    def answer(self, request):
        results = []
        for i, call in enumerate(request["calls"]):
            try:
                results.append(self.run_verl(call) if self.setup["signature"] == "verl" else self.run_trl(call))
            except CallError as e:
                _leave_if_forked()
                return {"id": request["id"], "call": i, "error": plain_error(e.kind, e)}
            except BaseException as e:  # noqa: B902 - the researcher's exception, SystemExit included
                _leave_if_forked()
                return {"id": request["id"], "call": i, "error": error_of(e, "raised", self.module_file)}
        return {"id": request["id"], "results": results}

    def serve(self):
        for line in PIPE_IN:
            if not line.strip():
                continue
            request = json.loads(line)
            if request.get("op") == "close":
                break
            answer = self.answer(request)
            sys.stdout.flush()
            sys.stderr.flush()
            try:
                send(answer)
            except ValueError as e:
                send({"id": request["id"], "call": 0, "error": plain_error("output", "cannot send the answer: %s" % e)})


def main():
    setup = json.loads(sys.argv[1])
    send({"hello": {"python": "%d.%d.%d" % sys.version_info[:3]}})
    # The host's own folder is not the researcher's: keep it off the import path.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    module_file = os.path.abspath(setup["module"]) if setup["module"].endswith(".py") else None
    try:
        fn, module_file = load_function(setup)
        sig = check_parameters(fn, setup)
    except CallError as e:
        _leave_if_forked()
        send({"fatal": plain_error(e.kind, e)})
        return 3
    except BaseException as e:  # noqa: B902 - anything the import raised, SystemExit included
        _leave_if_forked()
        send({"fatal": error_of(e, "import", module_file)})
        return 3
    _leave_if_forked()
    target = getattr(fn, "__call__", fn)
    is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(target)
    send({"ready": {
        "function": "%s.%s" % (getattr(fn, "__module__", "?"), getattr(fn, "__qualname__", setup["function"])),
        "async": bool(is_async),
        "python": "%d.%d.%d" % sys.version_info[:3],
    }})
    Host(fn, sig, setup, module_file).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
