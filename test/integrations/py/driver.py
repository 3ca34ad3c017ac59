"""Drives the Python integrations in docs/integrations against a running `corl serve`.

Usage: python3 driver.py JOB.json  (prints one JSON document with what each step got)

A job: {"integrations": dir, "url": base URL, "agent": name, "mode": "raw" | "trl" | "verl" |
"openrlhf", "steps": [...]}; what a step holds depends on the mode (see the functions below).
"""

import json
import sys
import threading


def main():
    job = json.load(open(sys.argv[1]))
    sys.path.insert(0, job["integrations"])
    from corl_client import CorlClient, CorlServeError

    client = CorlClient(job["url"], retries=job.get("retries", 5), backoff=0.05, timeout=120)
    mode = job["mode"]
    out = []

    def attempt(fn):
        try:
            return {"ok": fn()}
        except CorlServeError as e:
            return {"error": {"code": e.code, "status": e.status, "server_code": e.server_code, "message": str(e)}}
        except ValueError as e:
            return {"value_error": str(e)}

    if mode == "raw":
        # step: {"step", "groups", "wait"?, "retries"?}
        for s in job["steps"]:
            out.append(attempt(lambda: client.post_groups(job["agent"], s["step"], s["groups"], wait=s.get("wait"), retries=s.get("retries"))))
    elif mode == "trl":
        # step: {"prompts", "completions", "columns"?: {name: [...]}}; one reward function for the job
        from trl_reward import CorlGroupReward

        fn = CorlGroupReward(client=client, agent=job["agent"], group_size=job["group_size"],
                             id_column=job.get("id_column"), start_step=job.get("start_step", 0), wait=job.get("wait"))
        for s in job["steps"]:
            r = attempt(lambda: fn(prompts=s["prompts"], completions=s["completions"], completion_ids=None, **s.get("columns", {})))
            if "ok" in r:
                r["answer"] = fn.last_answer
            r["name"] = fn.__name__
            out.append(r)
    elif mode == "verl":
        # step: {"step", "uids", "prompts", "responses", "ids"?}; the pure core of the manager
        from verl_reward_manager import CorlRewardManager, score_batch

        manager = CorlRewardManager(tokenizer=None, agent=job["agent"], client=client)
        for s in job["steps"]:
            step = manager.step_of({"global_steps": s["step"]} if "step" in s else {})
            r = attempt(lambda: score_batch(client, job["agent"], step, s["uids"], s["prompts"], s["responses"], s.get("ids")))
            if "ok" in r:
                rewards, extra, answer = r["ok"]
                r = {"ok": rewards, "extra": extra, "answer": answer, "step": step}
            out.append(r)
    elif mode == "verl_glue":
        # step: {"step", "rows": [{"prompt", "response", "uid", "index"}]}: CorlRewardManager.__call__
        # on a stand-in DataProto of token ids, with a stand-in torch and tokenizer (fake_torch.py)
        import fake_torch

        sys.modules["torch"] = fake_torch
        from verl_reward_manager import CorlRewardManager

        tok = fake_torch.Tokenizer()
        manager = CorlRewardManager(tokenizer=tok, agent=job["agent"], client=client)
        for s in job["steps"]:
            rows = [dict(r, prompt=tok.encode(r["prompt"]), response=tok.encode(r["response"])) for r in s["rows"]]
            data = fake_torch.data_proto(rows, s["step"])
            result = manager(data, return_dict=True)
            out.append({"reward_tensor": result["reward_tensor"].tolist(), "extra": result["reward_extra_info"],
                        "answer": manager.last_answer})
    elif mode == "openrlhf":
        # step: {"samples": [{"query", "prompt"?, "label"?}]}: one request per sample, all at once
        for s in job["steps"]:
            results = [None] * len(s["samples"])

            def send(i, sample):
                results[i] = attempt(lambda: client.get_reward(
                    [sample["query"]],
                    [sample["prompt"]] if "prompt" in sample else None,
                    [sample["label"]] if "label" in sample else None,
                    agent=job.get("agent")))

            threads = [threading.Thread(target=send, args=(i, x)) for i, x in enumerate(s["samples"])]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            out.append(results)
    elif mode == "slow_retry":
        # {"first": sample, "rest": [samples], "delay": seconds}: the first sample from a client
        # whose 1 s timeout runs out while the sample waits at its barrier, so it retries (up to twice);
        # the rest are sent `delay` seconds later, concurrently, by a patient client
        import time

        slow = CorlClient(job["url"], retries=2, backoff=0.05, timeout=1.0)
        results = {}

        def first():
            x = job["first"]
            results["first"] = attempt(lambda: slow.get_reward([x["query"]], [x["prompt"]], agent=job.get("agent")))

        t0 = threading.Thread(target=first)
        t0.start()
        time.sleep(job["delay"])
        rest = [None] * len(job["rest"])

        def send(i, x):
            rest[i] = attempt(lambda: client.get_reward([x["query"]], [x["prompt"]], agent=job.get("agent")))

        threads = [threading.Thread(target=send, args=(i, x)) for i, x in enumerate(job["rest"])]
        for t in threads:
            t.start()
        for t in threads + [t0]:
            t.join()
        results["rest"] = rest
        out = results
    else:
        raise SystemExit("unknown mode %r" % (mode,))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
