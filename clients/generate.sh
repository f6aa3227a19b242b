#!/usr/bin/env bash
# `make clients`: generate the Python client (openapi-python-client) and the TypeScript types (openapi-typescript,
# called through openapi-fetch) from the newest frozen contract into var/clients/ (git-ignored). Fails on any
# generator warning and on any operation of the contract a client lacks. The generators are pinned: Python here,
# TypeScript in clients/typescript/package-lock.json.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PYTHON_GENERATOR="openapi-python-client==0.29.1"
HTTPX_RETRIES="0.6.0"  # the retry layer of compliance_api_client.sdk
OUT="var/clients"
contract="$(ls compliance_api/openapi/contracts/*.json | sort | tail -n 1)"
mkdir -p "$OUT"
cp "$contract" "$OUT/contract.json"
echo "generating clients from $contract into $OUT/"

# The Python generator lives in a venv of its own: it pins typer < 0.28, which the service does not run on.
generator="$OUT/generator"
installed="$("$generator/bin/openapi-python-client" --version 2>/dev/null | awk '{ print $NF }' || true)"
if [ "$installed" != "${PYTHON_GENERATOR##*==}" ]; then
    rm -rf "$generator"
    python3 -m venv "$generator"
    "$generator/bin/pip" install --quiet --disable-pip-version-check "$PYTHON_GENERATOR"
fi
if ! "$generator/bin/pip" show httpx-retries 2>/dev/null | grep -qx "Version: $HTTPX_RETRIES"; then
    "$generator/bin/pip" install --quiet --disable-pip-version-check "httpx-retries==$HTTPX_RETRIES"
fi
rm -rf "$OUT/python"
# The package version is the contract's date, as PEP 440 wants it (2026-07-09 → 2026.7.9).
version="$(basename "$contract" .json | awk -F- '{ printf "%d.%d.%d", $1, $2, $3 }')"
printf 'package_version_override: "%s"\n' "$version" >"$OUT/python-config.yaml"
(
    cd "$OUT"
    PATH="$PWD/generator/bin:$PATH" generator/bin/openapi-python-client generate --path contract.json \
        --config python-config.yaml --output-path python --fail-on-warning
)
# The hand-written layer (retries, Idempotency-Keys, paging, problems raised) goes into the package as
# `compliance_api_client.sdk`, with the one dependency it adds; then the package is built as a versioned wheel.
cp clients/python/sdk.py "$OUT/python/compliance_api_client/sdk.py"
sed -i 's/^attrs = \(.*\)$/attrs = \1\nhttpx-retries = "'"$HTTPX_RETRIES"'"/' "$OUT/python/pyproject.toml"
grep -q '^httpx-retries = ' "$OUT/python/pyproject.toml"
rm -rf "$OUT/dist"
"$generator/bin/pip" wheel --quiet --disable-pip-version-check --no-deps "./$OUT/python" -w "$OUT/dist"

# TypeScript: openapi-typescript prints nothing but its banner and the file it wrote, unless something is wrong.
if [ ! -d clients/typescript/node_modules ] ||
    ! cmp -s clients/typescript/package-lock.json clients/typescript/node_modules/.package-lock.json.source; then
    npm ci --prefix clients/typescript --no-audit --no-fund --loglevel=error
    cp clients/typescript/package-lock.json clients/typescript/node_modules/.package-lock.json.source
fi
mkdir -p "$OUT/typescript"
log="$OUT/typescript/generate.log"
clients/typescript/node_modules/.bin/openapi-typescript "$OUT/contract.json" -o "$OUT/typescript/schema.d.ts" \
    --default-non-nullable false \
    >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
if grep -v -e 'openapi-typescript [0-9]' -e '→' "$log" | grep -q .; then
    echo "error: openapi-typescript warned:" >&2
    cat "$log" >&2
    exit 1
fi

# The npm package: the hand-written layer (clients/typescript/sdk.ts) as its entry point beside the types, compiled,
# versioned like the wheel, packed into $OUT/dist/, and installed (unsaved) where the smoke test imports it.
package="$OUT/typescript/package"
rm -rf "$package"
mkdir -p "$package"
cp clients/typescript/package/tsconfig.json "$package/"
cp clients/typescript/sdk.ts "$package/index.ts"
cp "$OUT/typescript/schema.d.ts" "$package/schema.d.ts"
sed 's/"version": "0.0.0"/"version": "'"$version"'"/' clients/typescript/package/package.json >"$package/package.json"
ln -s "$PWD/clients/typescript/node_modules" "$package/node_modules"
clients/typescript/node_modules/.bin/tsc -p "$package"
cp "$package/schema.d.ts" "$package/dist/schema.d.ts"
npm pack "./$package" --pack-destination "$OUT/dist" --silent >/dev/null
npm install --prefix clients/typescript --no-save --no-audit --no-fund --loglevel=error \
    "./$OUT/dist/compliance-api-client-$version.tgz"

"$generator/bin/python" clients/check_generated.py "$OUT"
