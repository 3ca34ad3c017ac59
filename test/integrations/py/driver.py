"""Drives the Python integrations in docs/integrations against a running `corl serve`.

Usage: python3 driver.py JOB.json  (prints one JSON document with what each step got)

A job: {"integrations": dir, "url": base URL, "agent": name, "mode": "raw" | "slow_retry", ...}: see
each mode below. The trainer adapters are driven by trainers.py.
"""

import json
import sys
import threading


def main():
    job = json.load(open(sys.argv[1]))
    # The client file by path (run under -I: nothing on sys.path but the standard library's).
    import importlib.util
    import os

    spec = importlib.util.spec_from_file_location("corl_client", os.path.join(job["integrations"], "corl_client.py"))
    corl_client = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corl_client)
    CorlClient, CorlServeError = corl_client.CorlClient, corl_client.CorlServeError

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
