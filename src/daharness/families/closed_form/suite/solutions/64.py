"""Reference solution for closed-form question 64."""

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

df = pd.read_csv("fair_affairs.csv")
y = (df["affairs"] > 0).astype(int)
X = pd.get_dummies(
    df.drop(columns="affairs"), columns=["occupation", "occupation_husb"], drop_first=True, dtype=float
)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=42, stratify=y)
scaler = StandardScaler().fit(X_train)
model = LogisticRegression(solver="lbfgs", max_iter=5000).fit(scaler.transform(X_train), y_train)
X_test_scaled = scaler.transform(X_test)
print(f"@accuracy[{accuracy_score(y_test, model.predict(X_test_scaled)):.2f}]")
print(f"@roc_auc[{roc_auc_score(y_test, model.predict_proba(X_test_scaled)[:, 1]):.2f}]")
print(f"@top_feature[{X.columns[np.argmax(np.abs(model.coef_[0]))]}]")
