#!/bin/bash
conda activate jupyter
jupyter kernelspec list
