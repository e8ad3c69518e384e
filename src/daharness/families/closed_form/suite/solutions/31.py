"""Reference solution for closed-form question 31."""

import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, confusion_matrix, recall_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

df = pd.read_csv("breast_cancer.csv")
X = df.drop(columns="diagnosis")
y = (df["diagnosis"] == "malignant").astype(int)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=42, stratify=y)
scaler = StandardScaler().fit(X_train)
model = LogisticRegression(solver="lbfgs", max_iter=5000).fit(scaler.transform(X_train), y_train)
pred = model.predict(scaler.transform(X_test))
tn, fp, fn, tp = confusion_matrix(y_test, pred).ravel()
print(f"@accuracy[{accuracy_score(y_test, pred):.4f}]")
print(f"@confusion_counts[{tn}, {fp}, {fn}, {tp}]")
print(f"@malignant_recall[{recall_score(y_test, pred):.4f}]")
