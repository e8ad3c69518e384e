#!/bin/bash
# wait until no kernel of JupyterLab is busy: what the agent ran in the notebook has finished
calm=0
for i in $(seq 90); do
    busy=$(curl -s --max-time 2 http://localhost:8888/api/kernels | jq '[.[] | select(.execution_state != "idle")] | length' 2>/dev/null)
    if [ "${busy:-0}" = "0" ]; then calm=$((calm + 1)); else calm=0; fi
    [ $calm -ge 2 ] && exit 0
    sleep 0.5
done
echo "a kernel of JupyterLab is still busy"
exit 1
