#!/bin/bash
# set up the dbt project garage in ~/projects and its profile in ~/.dbt
mkdir -p ~/.dbt ~/projects
source /home/user/anaconda3/etc/profile.d/conda.sh 2>/dev/null
conda activate dbt
cd ~/projects
unzip -q ~/garage.zip && rm -f ~/garage.zip
mv garage/profiles.yml ~/.dbt/profiles.yml

gnome-terminal --maximize --working-directory=/home/user/projects/garage
code /home/user/projects/garage --disable-workspace-trust
