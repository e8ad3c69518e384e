import json

import pandas as pd

macro = pd.read_csv("macrodata.csv")
macro["label"] = macro["year"].astype(int).astype(str) + "Q" + macro["quarter"].astype(int).astype(str)
negative = (macro["realgdp"].pct_change() < 0).tolist()

# maximal runs of consecutive quarters with negative quarter-on-quarter growth
episodes = []
start = None
for i, is_negative in enumerate(negative + [False]):
    if is_negative and start is None:
        start = i
    elif not is_negative and start is not None:
        if i - start >= 2:
            episodes.append((start, i - 1))
        start = None


def decline(run):
    first, last = run
    return (macro["realgdp"].iloc[last] / macro["realgdp"].iloc[first - 1] - 1) * 100


longest = max(episodes, key=lambda run: run[1] - run[0])
deepest = min(episodes, key=decline)
shallowest = max(episodes, key=decline)

answer = {
    "n_episodes": len(episodes),
    "longest_start": macro["label"].iloc[longest[0]],
    "longest_quarters": longest[1] - longest[0] + 1,
    "deepest_start": macro["label"].iloc[deepest[0]],
    "deepest_decline_pct": round(float(decline(deepest)), 2),
    "deepest_max_unemp": round(float(macro["unemp"].iloc[deepest[0] : deepest[1] + 1].max()), 1),
    "shallowest_start": macro["label"].iloc[shallowest[0]],
}
print(json.dumps(answer))
