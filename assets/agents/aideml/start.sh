#!/bin/bash
# WecoAI's AIDE (aideml from PyPI, unchanged) as an ml2b external agent, as ML2B's harness
# starts it (agent/start.sh in its agent image): the task in the pair's language from
# /home/instructions.txt, the public data from /home/data, its journal in /home/logs, and
# its best solution left as /home/submission/submission.py.
#
# Its model is reached through ml2b's gateway (OPENAI_BASE_URL). AIDE sends a model whose
# name starts with gpt- or o<digit> to OpenAI's Responses API, which the gateway does not
# serve; every other name goes to the chat-completions API at OPENAI_BASE_URL. The gateway
# names the unit's model itself, so the name AIDE is given only picks that path.
set -euo pipefail
steps="${AIDE_STEPS:-20}"
model="ml2b-${ML2B_MODEL}"
aide data_dir=/home/data desc_file=/home/instructions.txt \
    log_dir=/home/logs workspace_dir=/home/workspace/aide exp_name=run \
    agent.steps="$steps" agent.code.model="$model" agent.feedback.model="$model" \
    agent.search.num_drafts="${AIDE_DRAFTS:-5}" exec.timeout="${AIDE_EXEC_TIMEOUT:-600}" \
    generate_report=False
best=$(ls -d /home/logs/*-run | head -n 1)/best_solution.py
cp "$best" /home/submission/submission.py
