# Initialise the cluster on first start as the official image does, then run PostgreSQL in the foreground.
set -eu
user="${POSTGRES_USER:-postgres}"
mkdir -p "$PGDATA" /run/postgresql
chown postgres:postgres "$PGDATA" /run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    printf '%s\n' "$POSTGRES_PASSWORD" >/tmp/pwfile
    chown postgres /tmp/pwfile
    runuser -u postgres -- initdb -D "$PGDATA" --username="$user" --pwfile=/tmp/pwfile --auth-local=trust \
        --auth-host=scram-sha-256 >/dev/null
    rm /tmp/pwfile
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    if [ "${POSTGRES_DB:-$user}" != postgres ]; then
        echo "CREATE DATABASE \"${POSTGRES_DB:-$user}\";" |
            runuser -u postgres -- postgres --single -D "$PGDATA" postgres >/dev/null
    fi
fi
exec runuser -u postgres -- postgres -D "$PGDATA" -c listen_addresses='*'
