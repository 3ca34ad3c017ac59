"""Majority agreement with checked steps: a label-free reward written as a TRL reward function.

A completion earns 1 when its final answer agrees with the majority answer and every equation it
writes on the way ("12+7=19") holds, else 0. The check needs no reference: it catches a slip in a
worked solution even when the slip's answer wins the vote.

The same file runs unchanged in two places:

- TRL: GRPOTrainer(reward_funcs=[reward_func], ...). TRL passes `prompts` and `completions` with each
  prompt repeated once per generation; the majority is taken over the completions of the same prompt
  (TTRL's self-vote).
- corl: "reward": {"use": "corl:python", "options": {"module": "reward.py"}}. corl also passes
  `answer_keys` (its canonical answers) and `pseudo_label` (the majority answer of the completions
  the topology names: with "corl:ring" the peer model's, Co-RL; with "corl:self" the model's own,
  TTRL), and the function votes with those.

Python standard library only.
"""

import re
from collections import Counter

BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
EQUATION = re.compile(r"(-?\d+)\s*([-+])\s*(\d+)\s*=\s*(-?\d+)")


def text_of(completion):
    """The completion's text: a string (standard datasets) or TRL's conversational [{"content": ...}]."""
    return completion if isinstance(completion, str) else completion[-1]["content"]


def final_answer(text):
    """The last \\boxed{...} answer, or None."""
    found = BOXED.findall(text)
    return found[-1].strip() if found and found[-1].strip() else None


def steps_hold(text):
    """Whether every "a+b=c" / "a-b=c" the text writes is true."""
    for a, op, b, c in EQUATION.findall(text):
        value = int(a) + int(b) if op == "+" else int(a) - int(b)
        if value != int(c):
            return False
    return True


def majority_by_prompt(prompts, answers):
    """Each entry's majority answer among the entries with the same prompt (ties: the first seen)."""
    groups = {}
    for prompt, answer in zip(prompts, answers):
        if answer is not None:
            groups.setdefault(repr(prompt), []).append(answer)
    winners = {p: Counter(a).most_common(1)[0][0] for p, a in groups.items()}
    return [winners.get(repr(p)) for p in prompts]


def reward_func(prompts, completions, answer_keys=None, pseudo_label=None, log_metric=None, **kwargs):
    texts = [text_of(c) for c in completions]
    answers = answer_keys if answer_keys is not None else [final_answer(t) for t in texts]
    labels = pseudo_label if pseudo_label is not None else majority_by_prompt(prompts, answers)
    checked = [steps_hold(t) for t in texts]
    rewards = [
        1.0 if answer is not None and answer == label and ok else 0.0
        for answer, label, ok in zip(answers, labels, checked)
    ]
    if log_metric is not None and texts:
        log_metric("steps_hold", sum(checked) / len(checked))
    return rewards
