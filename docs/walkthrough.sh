#!/usr/bin/env bash
# The first calls with a new API key, as the README shows them: run it against your server.
#
#   KEY=shipyard_pat_… bash docs/walkthrough.sh                    # http://localhost:$PORT (3000)
#   KEY=shipyard_pat_… SHIPYARD_URL=https://shipyard.example bash docs/walkthrough.sh
#
# The key needs five scopes: Read posts & comments, Write posts & comments, Read profile, Read
# projects, Write projects (and not Read jobs: the last call shows the 403 a missing scope gets).
# Needs bash, curl and the usual text tools (grep, sed, paste): no Node, no jq. test/walkthrough.test.ts
# runs it with nothing else on its PATH.
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
# Every value of a field called $1 in a JSON answer, in order, one a line (strings and numbers;
# escapes are left as sent): call … | field title. It fails when there is none (the call before
# it failed and has said why, or the answer lacks the field), and so do first and pair: the
# walk-through ends there.
field() {
  grep -oE "\"$1\":(\"([^\"\\\\]|\\\\.)*\"|-?[0-9][0-9.eE+-]*)" | sed -E "s/^\"$1\"://; s/^\"(.*)\"\$/\\1/"
}
# The first such value: the resource's own, since its id and fields come before what it embeds.
first() { field "$1" | sed -n 1p; }
# Two fields of each item of a list, side by side: call … | pair position '. ' title
pair() {
  local json left right
  json=$(cat)
  left=$(field "$1" <<<"$json")
  right=$(field "$3" <<<"$json")
  paste -d '\n' <(printf '%s\n' "$left") <(printf '%s\n' "$right") | sed "N; s/\n/$2/"
}
step() { printf '\n== %s\n' "$*"; }

step "Who the key belongs to (profile.read)"
call "$API/users/me" | first username

step "Create a project (projects.write)"
PROJECT=$(call "$API/projects" -H 'Content-Type: application/json' \
  -d "{\"name\": \"Analytical Engine $(date +%s)\", \"visibility\": \"public\"}" | first id)
echo "project $PROJECT"

step "Two milestones, then the roadmap in order (projects.read)"
GEARS=$(call "$API/projects/$PROJECT/milestones" -H 'Content-Type: application/json' \
  -d '{"title": "Cut the gears", "dueDate": "2027-01-31"}' | first id)
call "$API/projects/$PROJECT/milestones" -H 'Content-Type: application/json' \
  -d '{"title": "Assemble the mill"}' | first title
call "$API/projects/$PROJECT/milestones?limit=50" | pair position '. ' title

step "A build log at risk that names the milestone it moved (content.write)"
call "$API/posts" -H 'Content-Type: application/json' \
  -d "{\"kind\": \"build_log\", \"projectId\": \"$PROJECT\", \"title\": \"Week 1\", \"body\": \"Frame assembled; gear blanks late.\", \"health\": \"at_risk\", \"milestoneIds\": [\"$GEARS\"]}" |
  first title

step "The milestone's due date moved, with the reason; the project's health"
call "$API/projects/$PROJECT/milestones/$GEARS" -X PATCH -H 'Content-Type: application/json' \
  -d '{"dueDate": "2027-02-28", "dueDateReason": "Gear blanks arrive late"}' | first slipDays | sed 's/^/slipped by days: /'
call "$API/projects/$PROJECT" | first status | sed 's/^/health: /'

step "An image, then a post that shows it"
MEDIA=$(call "$API/media" -F "file=@$HERE/walkthrough.png;type=image/png" | first id)
echo "image $MEDIA"
POST=$(call "$API/posts" -H 'Content-Type: application/json' \
  -d "{\"title\": \"The engine so far\", \"body\": \"Look\", \"tags\": [\"Engines\"], \"mediaIds\": [\"$MEDIA\"]}" | first id)
echo "post $POST"

step "A comment and a reaction on it"
call "$API/posts/$POST/comments" -H 'Content-Type: application/json' -d '{"body": "Nice!"}' | first body
call "$API/posts/$POST/reactions" -H 'Content-Type: application/json' -d '{"kind": "rocket"}' | first rocket | sed 's/^/rocket: /'

step "Search finds the project (content.read)"
call "$API/search?q=analytical%20engine&type=project" | pair type ': ' title

step "A scope the key does not have is a 403 that names it"
ANSWER=$(curl -sS -H "Authorization: Bearer $KEY" "$API/jobs")
STATUS=$(first status <<<"$ANSWER")
TITLE=$(first title <<<"$ANSWER")
NEEDS=$(first requiredScope <<<"$ANSWER")
echo "$STATUS $TITLE: needs $NEEDS"
