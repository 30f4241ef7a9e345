"""Set up once, fork 8, score each, keep the best: a search over sandlot session forks.

The setup (load data, define the model and its reward) runs once, in one session. Each round
forks that session 8 times; each fork tries one step size for a few steps of gradient descent
from the state it inherited (its variables and files), and reports its reward. The best fork is
kept and the next round forks from it, so no episode ever repeats the setup or the steps before
it; the other forks are deleted.

    python examples/fork_best_of.py http://127.0.0.1:8080

(A server with a warm pool of at least 8 kernels forks fastest: SANDLOT_SESSION_POOL=8.)
"""

from __future__ import annotations

import sys

from sandlot.client import Client, Session

SETUP = """
import numpy as np
rng = np.random.default_rng(0)
x = rng.normal(size=(2000, 3))
y = x @ np.array([3.0, -2.0, 0.5]) + 0.1 * rng.normal(size=2000)
np.save("data.npy", np.c_[x, y])          # a file every fork inherits too
w = np.zeros(3)

def loss(w):
    return float(np.mean((x @ w - y) ** 2))

def step(w, lr, n=5):
    for _ in range(n):
        w = w - lr * 2 * x.T @ (x @ w - y) / len(y)
    return w
"""
EPISODE = "w = step(w, {lr}); print(-loss(w))"  # the reward: minus the loss
STEP_SIZES = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 0.6, 0.9)


def best_of(parent: Session, tries: tuple[float, ...] = STEP_SIZES) -> tuple[Session, float]:
    """Fork `parent` once per try, run each try in its fork, keep the fork with the highest
    reward (the others are deleted); the kept session and its reward."""
    forks = parent.fork(len(tries))
    rewards = []
    for fork, lr in zip(forks, tries, strict=True):
        out = fork.run(EPISODE.format(lr=lr))
        rewards.append(float(out.stdout) if out.status == "ok" else float("-inf"))
    best = max(range(len(forks)), key=rewards.__getitem__)
    for k, fork in enumerate(forks):
        if k != best:
            fork.close()
    return forks[best], rewards[best]


def main(
    url: str, rounds: int = 3, api_key: str | None = None, tries: tuple[float, ...] = STEP_SIZES
) -> list[float]:
    """The best reward of each round."""
    rewards = []
    with Client(url, api_key=api_key) as sb, sb.session("python") as setup:
        assert setup.run(SETUP).status == "ok"
        current = setup
        for k in range(rounds):
            kept, reward = best_of(current, tries)
            if current is not setup:
                current.close()
            current = kept
            rewards.append(reward)
            print(f"round {k + 1}: best reward {reward:.5f}")
        current.close()
    return rewards


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080")
