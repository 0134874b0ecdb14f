#!/usr/bin/env bash
# Checks the documentation's relative links: every [text](path) and
# [text](path#anchor) in README.md and docs/**/*.md must name a file or folder
# that exists in the source tree, and README.md stays at most 150 lines (it is
# the front door; the rest lives in docs/).
#
# Skipped: http:, https: and mailto: links, pure #anchor links, and anything
# inside fenced code blocks or `inline code` (examples, not links). Anchors are
# not checked, only the file they point into.
#
# Usage: tests/doc_links_test.sh [SOURCE_DIR]   (default: this repository)
# Exit 0 and "doc links: N checked, ok"; exit 1 naming file:line and the link.
set -euo pipefail

src=${1:-"$(cd "$(dirname "$0")/.." && pwd)"}
cd "$src"

readme_lines_max=150
failures=0
checked=0

fail() {
  echo "doc links: $1" >&2
  failures=$((failures + 1))
}

[ -f README.md ] || { echo "doc links: no README.md in $src" >&2; exit 1; }
readme_lines=$(wc -l < README.md)
if [ "$readme_lines" -gt "$readme_lines_max" ]; then
  fail "README.md: $readme_lines lines, more than $readme_lines_max (move the rest into docs/)"
fi

# Checks one link target found at file:line.
check_target() {
  local file=$1 line=$2 target=$3
  case "$target" in
    http://* | https://* | mailto:* | '#'* | '') return ;;
  esac
  local path=${target%%#*}
  path=${path//%20/ }
  local resolved
  if [[ $path == /* ]]; then
    resolved=".$path"                     # GitHub resolves /x from the repository root
  else
    local dir=.
    [[ $file == */* ]] && dir=${file%/*}
    resolved="$dir/$path"
  fi
  checked=$((checked + 1))
  [ -e "$resolved" ] || fail "$file:$line: broken link ($target): $resolved does not exist"
}

# Inline links: ](target) or ](target "title"). Reference definitions: [id]: target.
inline_re='\]\(([^)[:space:]]+)([[:space:]]+"[^"]*")?\)'
definition_re='^[[:space:]]{0,3}\[[^]]+\]:[[:space:]]+([^[:space:]]+)'

check_file() {
  local file=$1 n=0 in_fence=0 text target
  local code_re='(`[^`]*`)'
  while IFS= read -r text || [ -n "$text" ]; do
    n=$((n + 1))
    if [[ $text =~ ^[[:space:]]*(\`\`\`|~~~) ]]; then
      in_fence=$((1 - in_fence))
      continue
    fi
    [ "$in_fence" = 1 ] && continue
    # Drop `inline code` spans: a link shown as an example is not a link.
    while [[ $text =~ $code_re ]]; do text=${text/"${BASH_REMATCH[1]}"/}; done
    if [[ $text =~ $definition_re ]]; then
      check_target "$file" "$n" "${BASH_REMATCH[1]}"
    fi
    while [[ $text =~ $inline_re ]]; do
      target=${BASH_REMATCH[1]}
      check_target "$file" "$n" "$target"
      text=${text#*"${BASH_REMATCH[0]}"}
    done
  done < "$file"
}

files=(README.md)
if [ -d docs ]; then
  while IFS= read -r f; do files+=("$f"); done < <(find docs -name '*.md' | LC_ALL=C sort)
fi
for f in "${files[@]}"; do check_file "$f"; done

if [ "$failures" -gt 0 ]; then
  echo "doc links: $failures problem(s) in ${#files[@]} files ($checked links checked)" >&2
  exit 1
fi
echo "doc links: $checked checked, ok"
