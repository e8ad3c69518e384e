#!/bin/bash
source /home/user/anaconda3/etc/profile.d/conda.sh 2>/dev/null
conda activate jupyter
