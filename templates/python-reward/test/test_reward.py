"""reward.py called as TRL's GRPOTrainer calls a reward function: keyword arguments only, each prompt
repeated once per generation, the dataset's other columns as lists, trainer_state, log_extra and
log_metric. Run: python3 -m unittest discover -s test -p "test_*.py" (npm test runs it too)."""

import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from reward import reward_func  # noqa: E402


def call_like_trl(prompts, completions, **columns):
    """Call reward_func with what GRPOTrainer passes (its completion_ids here are token counts' stand-ins)."""
    metrics = {}
    rewards = reward_func(
        prompts=prompts,
        completions=completions,
        completion_ids=[list(range(len(c if isinstance(c, str) else c[0]["content"]))) for c in completions],
        trainer_state=types.SimpleNamespace(global_step=3, max_steps=10, epoch=0.3),
        log_extra=lambda column, values: None,
        log_metric=lambda name, value: metrics.setdefault(name, []).append(value),
        **columns,
    )
    return rewards, metrics


class RewardAsTrlCallsIt(unittest.TestCase):
    def test_majority_of_each_prompt_with_checked_steps(self):
        prompts = ["Compute 12 plus 7."] * 4 + ["Compute 5 minus 9."] * 4
        completions = [
            "12+7=19;\\boxed{19}",
            "12+7=19;\\boxed{19}",
            "12+7=18;\\boxed{18}",
            "12+7=20;20-1=19;\\boxed{19}",  # agrees, but 12+7=20 is false
            "5-9=-4;\\boxed{-4}",
            "\\boxed{4}",
            "5-9=-4;\\boxed{-4}",
            "I do not know",
        ]
        rewards, metrics = call_like_trl(prompts, completions, answer=["19"] * 4 + ["-4"] * 4)
        self.assertEqual(rewards, [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0])
        self.assertEqual(metrics, {"steps_hold": [6 / 8]})

    def test_conversational_completions(self):
        prompts = [[{"role": "user", "content": "Compute 1 plus 1."}]] * 3
        completions = [[{"role": "assistant", "content": t}] for t in ("\\boxed{2}", "\\boxed{2}", "\\boxed{3}")]
        rewards, _ = call_like_trl(prompts, completions)
        self.assertEqual(rewards, [1.0, 1.0, 0.0])

    def test_a_label_given_by_corl_wins_over_the_own_vote(self):
        # corl passes the supervisors' majority as pseudo_label and its own answer keys
        rewards, _ = call_like_trl(
            ["q"] * 3,
            ["\\boxed{2}", "\\boxed{2}", "\\boxed{3}"],
            answer_keys=["2", "2", "3"],
            pseudo_label=["3", "3", "3"],
        )
        self.assertEqual(rewards, [0.0, 0.0, 1.0])


if __name__ == "__main__":
    unittest.main()
