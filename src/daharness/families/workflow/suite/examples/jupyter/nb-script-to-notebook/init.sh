#!/bin/bash
exec 1>/dev/null 2>/dev/null
source /home/user/anaconda3/etc/profile.d/conda.sh
conda activate jupyter
