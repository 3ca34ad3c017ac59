"""Drives the Python integrations in docs/integrations against a running `corl serve`.

Usage: python3 driver.py JOB.json  (prints one JSON document with what each step got)

A job: {"integrations": dir, "url": base URL, "agent": name, "mode": "raw", "steps": [...]}; a step
is {"step", "groups", "wait"?, "retries"?}: one POST /v1/groups. The trainer adapters are driven by
trainers.py.
"""

import json
import sys


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
    else:
        raise SystemExit("unknown mode %r" % (mode,))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
