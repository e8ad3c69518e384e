#!/bin/bash
# set up the dbt project energy in ~/projects and its profile in ~/.dbt
mkdir -p ~/.dbt ~/projects
source /home/user/anaconda3/etc/profile.d/conda.sh 2>/dev/null
conda activate dbt
cd ~/projects
unzip -q ~/energy.zip && rm -f ~/energy.zip
mv energy/profiles.yml ~/.dbt/profiles.yml

gnome-terminal --maximize --working-directory=/home/user/projects/energy
code /home/user/projects/energy --disable-workspace-trust
