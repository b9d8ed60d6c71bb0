#!/usr/bin/env bash
# The first calls with a new API key, as the README shows them: run it against your server.
#
#   KEY=shipyard_pat_… bash docs/walkthrough.sh                    # http://localhost:$PORT (3000)
#   KEY=shipyard_pat_… SHIPYARD_URL=https://shipyard.example bash docs/walkthrough.sh
#
# The key needs five scopes: Read profile, Read projects, Write projects, Read posts & comments,
# Write posts & comments (and not Read jobs: the last call shows the 403 a missing scope gets).
# Needs curl and Node.js (to read ids out of the JSON answers). test/walkthrough.test.ts runs it.
set -euo pipefail

: "${KEY:?set KEY to an API key from Settings → Manage API keys}"
API="${SHIPYARD_URL:-http://localhost:${PORT:-3000}}/api/v1"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# One call: prints the answer; stops the walk-through on an error status, saying which.
call() {
  local out status rc=0
  out=$(curl -sS -w '\n%{http_code}' -H "Authorization: Bearer $KEY" "$@") || rc=$?
  if ((rc == 7)); then
    printf 'Nothing answers at %s: is the server running (make run)? On another port, set PORT=… (or SHIPYARD_URL=…).\n' "$API" >&2
    return 1
  fi
  ((rc == 0)) || return "$rc"
  status=${out##*$'\n'}
  out=${out%$'\n'*}
  if ((status >= 400)); then
    printf 'HTTP %s from %s\n%s\n' "$status" "$1" "$out" >&2
    return 1
  fi
  printf '%s\n' "$out"
}
# Something read out of a JSON answer, `v`: call … | pick v.id
# (nothing to read when the call before it failed: that call has said why)
pick() { node -e "const s = require('fs').readFileSync(0, 'utf8'); if (!s) process.exit(1); const v = JSON.parse(s); console.log($1)"; }
step() { printf '\n== %s\n' "$*"; }

step "Who the key belongs to (profile.read)"
call "$API/users/me" | pick v.username

step "Create a project (projects.write)"
PROJECT=$(call "$API/projects" -H 'Content-Type: application/json' \
  -d "{\"name\": \"Analytical Engine $(date +%s)\", \"visibility\": \"public\"}" | pick v.id)
echo "project $PROJECT"

step "Two milestones, then the roadmap in order (projects.read)"
call "$API/projects/$PROJECT/milestones" -H 'Content-Type: application/json' \
  -d '{"title": "Cut the gears", "dueDate": "2026-12-31"}' | pick v.title
call "$API/projects/$PROJECT/milestones" -H 'Content-Type: application/json' \
  -d '{"title": "Assemble the mill"}' | pick v.title
call "$API/projects/$PROJECT/milestones?limit=50" | pick 'v.items.map((m) => m.position + ". " + m.title).join("\n")'

step "A build log for the project (content.write)"
call "$API/posts" -H 'Content-Type: application/json' \
  -d "{\"kind\": \"build_log\", \"projectId\": \"$PROJECT\", \"title\": \"Week 1\", \"body\": \"Frame assembled.\"}" |
  pick v.title

step "An image, then a post that shows it"
MEDIA=$(call "$API/media" -F "file=@$HERE/walkthrough.png;type=image/png" | pick v.id)
echo "image $MEDIA"
POST=$(call "$API/posts" -H 'Content-Type: application/json' \
  -d "{\"title\": \"The engine so far\", \"body\": \"Look\", \"tags\": [\"Engines\"], \"mediaIds\": [\"$MEDIA\"]}" | pick v.id)
echo "post $POST"

step "A comment and a reaction on it"
call "$API/posts/$POST/comments" -H 'Content-Type: application/json' -d '{"body": "Nice!"}' | pick v.body
call "$API/posts/$POST/reactions" -H 'Content-Type: application/json' -d '{"kind": "rocket"}' | pick '"rocket: " + v.counts.rocket'

step "Search finds the project (content.read)"
call "$API/search?q=analytical%20engine&type=project" | pick 'v.items.map((r) => r.type + ": " + r.title).join("\n")'

step "A scope the key does not have is a 403 that names it"
curl -sS -H "Authorization: Bearer $KEY" "$API/jobs" | pick 'v.status + " " + v.title + ": needs " + v.requiredScope'
