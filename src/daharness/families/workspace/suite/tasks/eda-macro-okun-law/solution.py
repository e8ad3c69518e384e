import json

import numpy as np
import pandas as pd
from scipy import stats

macro = pd.read_csv("macrodata.csv")
growth = 100 * np.log(macro["realgdp"]).diff()
unemployment_change = macro["unemp"].diff()
data = pd.DataFrame({"growth": growth, "du": unemployment_change}).dropna()

fit = stats.linregress(data["growth"], data["du"])
jarque_bera = stats.jarque_bera(data["growth"])

result = {
    "n_obs": int(len(data)),
    "slope": round(float(fit.slope), 4),
    "slope_stderr": round(float(fit.stderr), 4),
    "intercept": round(float(fit.intercept), 4),
    "r_squared": round(float(fit.rvalue**2), 4),
    "breakeven_growth": round(float(-fit.intercept / fit.slope), 4),
    "jb_stat": round(float(jarque_bera.statistic), 4),
    "jb_p": round(float(jarque_bera.pvalue), 4),
}
with open("okun.json", "w") as handle:
    json.dump(result, handle, indent=2)
