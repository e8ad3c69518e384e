"""A Tapilot-Crossing release folder for tests: entries written for daharness over the release's real tables.

`build(folder)` writes the release layout (`data/dialogue_data/<file>.jsonl`, `data/resource/`) with entries
in all eight files, and `write_responses(folder)` a response folder as the release's `call_api.py` leaves it
(each entry with its `response`). The entries cover what the release's evaluator distinguishes: multi-intent
entries (two result types, one line each), the private library, history code, the reference fallback to
`reference_answer`, every branch of its letter and code extraction, eval output that is True / False /
a number above or below 0.6 / nan / nothing, failing and timing-out predictions, and a prediction that
forges the reference's results. Run as a script to write a folder: `python tapilot_release.py OUT`.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

RESOURCE = Path(__file__).parents[2] / "fixtures" / "tapilot" / "resource"
EVALUATE = Path(__file__).parents[2] / "fixtures" / "tapilot" / "official" / "evaluate.py"
TIMEOUT_S = (
    30  # the tests' --code_gen_timeout, the same for the release and daharness (one entry sleeps past it)
)
SYSTEM = (
    "You are a data scientist with an impressive array of skills including data analysis and visualization."
)
TABLE = {
    "credit_card_risk": "credit_customers.csv",
    "ATP_tennis": "atp_tennis.csv",
    "fast_food": "fastfood.csv",
    "laptop_price": "laptops_price.csv",
    "melb_housing": "melb_data.csv",
}


def save(variable: str, name: str) -> str:
    return f'pickle.dump({variable}, open("./pred_result/{name}.pkl", "wb"))\n'


def eval_value(name: str) -> str:
    return (
        "import pickle\n"
        f'ref = pickle.load(open("./ref_result/{name}.pkl", "rb"))\n'
        f'pred = pickle.load(open("./pred_result/{name}.pkl", "rb"))\n'
        "print(abs(float(ref) - float(pred)) < 1e-6)\n"
    )


def eval_frame(name: str) -> str:
    return (
        "import pandas as pd\n"
        f'ref = pd.read_pickle("./ref_result/{name}.pkl")\n'
        f'pred = pd.read_pickle("./pred_result/{name}.pkl")\n'
        "try:\n"
        "    pd.testing.assert_frame_equal(ref.reset_index(drop=True), pred.reset_index(drop=True),\n"
        "                                  check_dtype=False, check_names=False)\n"
        "    print(True)\n"
        "except AssertionError:\n"
        "    print(False)\n"
    )


def eval_plot(file: str) -> str:
    return (
        "import numpy as np\n"
        "from PIL import Image\n"
        "from skimage.metrics import structural_similarity\n"
        "def gray(path):\n"
        '    return np.asarray(Image.open(path).convert("L").resize((800, 600)), dtype=float)\n'
        f'print(structural_similarity(gray("./ref_result/{file}"), gray("./pred_result/{file}"), data_range=255.0))\n'
    )


def fenced(code: str, language: str = "python") -> str:
    return f"```{language}\n{code}```"


def entry(
    data_id: int,
    domain: str,
    result_type: str | list[str],
    query: str,
    reference: str,
    *,
    history: list[tuple[str, str]] = (),  # type: ignore[assignment]
    eval_metrics: str = "",
    ref_code_all: str | None = None,
    response: str = "",
) -> dict[str, Any]:
    hist_code = "".join(code for _, code in history)
    messages = [{"role": "system", "content": SYSTEM}]
    for asked, code in history:
        messages += [{"role": "user", "content": asked}, {"role": "assistant", "content": fenced(code)}]
    messages.append({"role": "user", "content": f"Table: {TABLE[domain]}\n{query}"})
    return {
        "data_id": data_id,
        "domain_name": domain,
        "result_type": result_type,
        "current_query": query,
        "prompt_with_hist_txt": "\n\n".join(f"[{m['role'].upper()}]: {m['content']}" for m in messages),
        "prompt_with_hist_json": messages,
        "reference_answer": reference,
        "ref_code_hist": hist_code,
        "ref_code_all": hist_code + reference if ref_code_all is None else ref_code_all,
        "eval_metrics": eval_metrics,
        "response": response,
    }


HEAD = "import pandas as pd\nimport pickle\n"
CREDIT = HEAD + 'credit_customers = pd.read_csv("credit_customers.csv")\n'
FAST = HEAD + 'fastfood = pd.read_csv("fastfood.csv")\n'
LAPTOPS = HEAD + 'laptops = pd.read_csv("laptops_price.csv")\n'
ATP = HEAD + 'atp = pd.read_csv("atp_tennis.csv")\n'
MELB = HEAD + 'melb = pd.read_csv("melb_data.csv")\n'
LOAD = "Load the table."

GOOD = "good_count = (credit_customers['class'] == 'good').sum()\n" + save("good_count", "good_count")
MEANS = (
    "import matplotlib.pyplot as plt\n"
    "means = fastfood.groupby('restaurant')['calories'].mean().reset_index()\n"
    + save("means", "means")
    + "plt.figure(figsize=(8, 5))\nplt.bar(means['restaurant'], means['calories'])\n"
    'plt.savefig("./pred_result/means.png")\nplt.show()\n'
)
MEANS_WRONG_PLOT = MEANS.replace("means['calories'])", "means['calories'] * 0 + 1, color='red')")
PRICE = "mean_price = laptops['Price'].mean()\n" + save("mean_price", "mean_price")
ROOMS = "big = melb[melb['Rooms'] >= 4][['Suburb', 'Price']]\n" + save("big", "big")
HARD = "hard = int((atp['Surface'] == 'Hard').sum())\n" + save("hard", "hard")
AGES = (
    "ages = credit_customers['age'].describe()[['min', 'max']].to_frame().T\n"
    + save("ages", "ages")
    + "oldest = credit_customers['age'].max()\n"
    + save("oldest", "oldest")
)
SODIUM = "sodium = fastfood.groupby('restaurant')['sodium'].mean()\n" + save("sodium", "sodium")
EVAL_SODIUM = (
    "import numpy as np, pickle\n"
    'ref = pickle.load(open("./ref_result/sodium.pkl", "rb"))\n'
    'pred = pickle.load(open("./pred_result/sodium.pkl", "rb"))\n'
    "print(np.corrcoef(np.asarray(ref, dtype=float), np.asarray(pred, dtype=float))[0, 1])\n"
)
WINNERS = "winners = atp['Winner'].value_counts().head(5)\n" + save("winners", "winners")
EVAL_WINNERS = (
    "import pickle\n"
    'ref = pickle.load(open("./ref_result/winners.pkl", "rb"))\n'
    'pred = pickle.load(open("./pred_result/winners.pkl", "rb"))\n'
    "if ref.equals(pred):\n    print(True)\n"
)
SALES = "sales = len(melb)\n" + save("sales", "sales")
EVAL_SALES = (
    "import pickle\n"
    'ref = pickle.load(open("./ref_result/sales.pkl", "rb"))\n'
    'pred = pickle.load(open("./pred_result/sales.pkl", "rb"))\n'
    "print(min(ref, pred) / max(ref, pred))\n"
)
DC = "from decision_company import read_csv_file, count_unique_values, avg, fetch_column, filter_by_value\n"
PRIVATE_HIST = HEAD + DC + 'credit_customers = read_csv_file("credit_customers.csv")\n'
PURPOSE = "purposes = count_unique_values(fetch_column(credit_customers, 'purpose'))\n" + save(
    "purposes", "purposes"
)
EVAL_PURPOSE = (
    "import pickle\n"
    'ref = pickle.load(open("./ref_result/purposes.pkl", "rb"))\n'
    'pred = pickle.load(open("./pred_result/purposes.pkl", "rb"))\n'
    "print(ref.equals(pred))\n"
)
YOUNG = (
    "young = filter_by_value(credit_customers, 'housing', 'rent')\n"
    "young_amount = avg(fetch_column(young, 'credit_amount'))\n" + save("young_amount", "young_amount")
)
PRIVATE_FAST = HEAD + DC + 'fastfood = read_csv_file("fastfood.csv")\n'
# a reference that saves into ./ref_result/ (the release's evaluator makes both folders)
TOP_PRICE = (
    "top_price = laptops['Price'].max()\n"
    + 'pickle.dump(top_price, open("./ref_result/top_price.pkl", "wb"))\n'
)
FAT = "fat = avg(fetch_column(fastfood, 'total_fat'))\n" + save("fat", "fat")


def code_files() -> dict[str, list[dict[str, Any]]]:
    normal = [
        entry(1, "credit_card_risk", "value", "How many customers have a good credit class?", GOOD,
              history=[(LOAD, CREDIT)], eval_metrics=eval_value("good_count"),
              response="Here is the code:\n" + fenced(GOOD)),
        entry(2, "fast_food", ["dataframe", "plot"], "Mean calories per restaurant, as a table and a bar chart.",
              MEANS, history=[(LOAD, FAST)], eval_metrics=eval_frame("means") + eval_plot("means.png"),
              response=fenced(MEANS, "")),  # a fence without a language
        entry(3, "laptop_price", "value", "What is the mean laptop price?", PRICE, history=[(LOAD, LAPTOPS)],
              eval_metrics=eval_value("mean_price"),
              response="You can compute it as follows.\n" + HEAD + PRICE + "```"),  # no fence: from 'import '
        entry(4, "melb_housing", "dataframe", "Suburb and price of houses with at least 4 rooms.", ROOMS,
              history=[(LOAD, MELB)], eval_metrics=eval_frame("big"),
              response=fenced(ROOMS.replace(">= 4", "> 4"))),  # wrong rows: False
        entry(5, "ATP_tennis", "value", "How many matches were played on hard courts?", HARD,
              history=[(LOAD, ATP)], eval_metrics=eval_value("hard"),
              response=fenced(HARD.replace("'Surface'", "'surface'"))),  # KeyError: pred failed
        entry(6, "credit_card_risk", "value", "Count the good customers again.", GOOD, history=[(LOAD, CREDIT)],
              eval_metrics=eval_value("good_count"),
              response=fenced("import time\ntime.sleep(600)\n" + GOOD)),  # pred timeout
        entry(7, "credit_card_risk", ["dataframe", "value"], "The youngest and oldest ages, and the oldest.",
              AGES, history=[(LOAD, CREDIT)], eval_metrics=eval_frame("ages") + eval_value("oldest"),
              response=fenced(AGES.replace("oldest = credit_customers['age'].max()", "oldest = 0"))),
        entry(8, "fast_food", "series", "Mean sodium per restaurant.", SODIUM, history=[(LOAD, FAST)],
              eval_metrics=EVAL_SODIUM,
              response=fenced(SODIUM.replace("['sodium'].mean()", "['sodium'].mean() * 0"))),  # nan
        entry(9, "ATP_tennis", "series", "The five players who won most matches.", WINNERS,
              history=[(LOAD, ATP)], eval_metrics=EVAL_WINNERS,
              response=fenced(WINNERS.replace("head(5)", "head(4)"))),  # eval prints nothing
        entry(10, "fast_food", ["dataframe", "plot"], "Mean calories per restaurant again, with the chart.",
              MEANS, history=[(LOAD, FAST)], eval_metrics=eval_frame("means") + eval_plot("means.png"),
              response="First a check:\n" + fenced("print(fastfood.shape)\n") + "\nThen:\n"
              + fenced(MEANS_WRONG_PLOT)),  # the longest of two blocks; a flat plot: SSIM low
        entry(11, "laptop_price", "value", "What is the mean price?", PRICE, history=[(LOAD, LAPTOPS)],
              eval_metrics=eval_value("mean_price"), response=""),  # no response
        entry(12, "credit_card_risk", "value", "Load the table and count the good customers.",
              CREDIT + GOOD, eval_metrics=eval_value("good_count"), ref_code_all="",  # the release's fallback
              response=fenced(CREDIT + GOOD)),
        entry(13, "laptop_price", "value", "What is the mean price, once more?", PRICE,
              history=[(LOAD, LAPTOPS)], eval_metrics=eval_value("mean_price"),
              response=fenced(  # forges the reference's result through a name the release does not rewrite
                  "mean_price = 1.0\n" + save("mean_price", "mean_price")
                  + 'pickle.dump(1.0, open("./ref" + "_result/mean_price.pkl", "wb"))\n'
              )),
        entry(14, "melb_housing", "value", "How many sales are there?", SALES, history=[(LOAD, MELB)],
              eval_metrics=EVAL_SALES, response=fenced(SALES.replace("len(melb)", "len(melb) // 2"))),  # 0.5
        entry(15, "melb_housing", "value", "How many sales are there, again?", SALES, history=[(LOAD, MELB)],
              eval_metrics=EVAL_SALES, response=fenced(SALES)),  # 1.0, a number above 0.6
        entry(16, "laptop_price", "value", "What is the highest laptop price?", TOP_PRICE,
              history=[(LOAD, LAPTOPS)], eval_metrics=eval_value("top_price"), response=fenced(TOP_PRICE)),
    ]  # fmt: skip
    private = [
        entry(1, "credit_card_risk", "series", "How many loans are there for each purpose?", PURPOSE,
              history=[(LOAD, PRIVATE_HIST)], eval_metrics=EVAL_PURPOSE, response=fenced(PURPOSE)),
        entry(2, "credit_card_risk", "value", "Mean credit amount of renters.", YOUNG,
              history=[(LOAD, PRIVATE_HIST)], eval_metrics=eval_value("young_amount"),
              response=fenced(YOUNG.replace("'rent'", "'own'"))),  # another group: False
        entry(3, "fast_food", "value", "Mean total fat of all items.", FAT, history=[(LOAD, PRIVATE_FAST)],
              eval_metrics=eval_value("fat"),
              response="\nAnswer: the code is\n```python\n" + FAT + "```\n"),
    ]  # fmt: skip
    correction = [
        entry(1, "ATP_tennis", "value", "That count was wrong: count only hard-court matches.", HARD,
              history=[(LOAD, ATP), ("Count hard-court matches.", "hard = len(atp)\n")],
              eval_metrics=eval_value("hard"), response=fenced(HARD)),
        entry(2, "melb_housing", "dataframe", "Fix it: at least 4 rooms, not more than 4.", ROOMS,
              history=[(LOAD, MELB), ("Houses with 4 rooms or more.", "big = melb[melb['Rooms'] > 4]\n")],
              eval_metrics=eval_frame("big"), response=fenced(ROOMS.replace("'Price'", "'Price', 'Rooms'"))),
    ]  # fmt: skip
    private_correction = [
        entry(1, "fast_food", "value", "Use the mean total fat, not the sum.", FAT,
              history=[(LOAD, PRIVATE_FAST), ("Total fat.", "fat = fastfood['total_fat'].sum()\n")],
              eval_metrics=eval_value("fat"), response=fenced(FAT)),
        entry(2, "credit_card_risk", "series", "Count purposes with the library's functions instead.", PURPOSE,
              history=[(LOAD, PRIVATE_HIST), ("Count purposes.", "p = credit_customers['purpose'].value_counts()\n")],
              eval_metrics=EVAL_PURPOSE, response="import nothing here"),  # 'import ' fallback: a syntax error
    ]  # fmt: skip
    return {
        "normal": normal,
        "private": private,
        "action_correction": correction,
        "private_action_correction": private_correction,
    }


def choice(data_id: int, domain: str, query: str, options: list[str], answer: str, response: str,
           *, quoted: bool = True) -> dict[str, Any]:  # fmt: skip
    listed = "\n".join(f"{'ABCDEFGHIJ'[i]}. {text}" for i, text in enumerate(options))
    letter = f'"{answer}"' if quoted else answer
    reference = f'{{"correct_answer": {letter}}}'
    made = entry(data_id, domain, "multi_choice", f"{query}\n\n{listed}", reference, history=[(LOAD, CREDIT)],
                 ref_code_all="", response=response)  # fmt: skip
    made["eval_metrics"] = ""
    return made


def choice_files() -> dict[str, list[dict[str, Any]]]:
    purposes = ["radio/tv", "new car", "furniture/equipment", "business"]
    return {
        "action_analysis": [
            choice(1, "credit_card_risk", "Which purpose is the most common?", purposes, "A",
                   "Looking at the counts, <choice>A. radio/tv</choice>"),
            choice(2, "credit_card_risk", "Which purpose is the second most common?", purposes, "B",
                   "Reasoning...\nAnswer: B"),
            choice(3, "credit_card_risk", "Is the credit class balanced?", ["Yes", "No, mostly good", "No, mostly bad"],
                   "B", "The answer is **B** since 70% are good."),
            choice(4, "credit_card_risk", "Which purpose is rarest here?", purposes, "D",
                   "<choice>D</choice>\nAnswer: D"),  # both markers: the release reads nothing
        ],
        "action_una": [
            choice(1, "credit_card_risk", "What is the customers' income?", ["10k", "20k", "Not answerable"], "C",
                   "C. The table has no income column."),
            choice(2, "credit_card_risk", "What is the customers' nationality?", ["German", "Not answerable"], "B",
                   "I think Not answerable", quoted=False),  # the first capital letter: I
        ],
        "action_bg": [
            choice(1, "credit_card_risk", "Which age group borrows most?", ["Under 30", "30 to 50", "Over 50"], "B",
                   "Option: B"),
            choice(2, "credit_card_risk", "Are long loans riskier?", ["Yes", "No"], "A", ""),  # no reply
            {**choice(3, "credit_card_risk", "Which job and housing are most common?",
                      ["skilled, own", "unskilled, rent"], "A", "Answer: A"),
             "result_type": ["multi_choice", "multi_choice"]},  # two intents; the release counts one
        ],
        "action_plotqa": [
            choice(1, "credit_card_risk", "In the chart, which bar is tallest?", purposes, "A", "A"),
            choice(2, "credit_card_risk", "Which colour is the line?", ["Blue", "Red"], "B", "Red"),  # no letter
        ],
    }  # fmt: skip


def all_files() -> dict[str, list[dict[str, Any]]]:
    return {**choice_files(), **code_files()}


LIBRARY_RECORD = {
    "private_lib": "decision_company.py",
    "private_lib_json": "decision_company.json",
}


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def build(folder: Path) -> Path:
    """The release layout under `folder`: data/dialogue_data/*.jsonl (no responses) and data/resource/."""
    shutil.copytree(RESOURCE, folder / "data" / "resource", dirs_exist_ok=True)
    for name, rows in all_files().items():
        entries = [{k: v for k, v in row.items() if k != "response"} for row in rows]
        if name.startswith("private"):
            entries = [LIBRARY_RECORD, *entries]
        _write(folder / "data" / "dialogue_data" / f"{name}.jsonl", entries)
    return folder


# Response rows that differ from the dialogue files (a run over other data): the release's evaluate.py
# takes these fields from the row. normal:4 (wrong rows) passes with the row's eval_metrics; action_analysis:3
# (reply B, right by the data) fails with the row's reference answer.
ROW_CHANGES = {
    ("normal", 4): {"eval_metrics": "print(True)\n"},
    ("action_analysis", 3): {"reference_answer": '{"correct_answer": "C"}'},
}


def write_responses(folder: Path, *, library_record: bool = True) -> Path:
    """A response folder as `call_api.py` writes it: each file's entries with their `response` (and the
    `ROW_CHANGES`); the private file keeps its library record first (with no response), as a run over its
    every line leaves it."""
    for name, rows in all_files().items():
        rows = [{**row, **ROW_CHANGES.get((name, row["data_id"]), {})} for row in rows]
        lines = [LIBRARY_RECORD, *rows] if library_record and name == "private" else rows
        _write(folder / f"{name}.jsonl", lines)
    return folder


if __name__ == "__main__":
    target = Path(sys.argv[1])
    build(target)
    write_responses(target / "responses")
    print(f"wrote {target}")
