#!/bin/bash
# set up the dbt project market in ~/projects and its profile in ~/.dbt, and generate its documentation
mkdir -p ~/.dbt ~/projects
source /home/user/anaconda3/etc/profile.d/conda.sh 2>/dev/null
conda activate dbt
cd ~/projects
unzip -q ~/market.zip && rm -f ~/market.zip
mv market/profiles.yml ~/.dbt/profiles.yml
cd market && dbt docs generate > /dev/null
