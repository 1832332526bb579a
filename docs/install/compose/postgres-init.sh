#!/bin/sh
# Run once by the postgres image on an empty data volume (compose.postgres.yaml): Exhale's own
# role, which owns its database but is not a superuser (Exhale refuses to run as one, since
# row-level security would not hold it).
set -eu
psql -v ON_ERROR_STOP=1 -v password="$EXHALE_DB_PASSWORD" --username "$POSTGRES_USER" --dbname postgres <<'SQL'
CREATE ROLE exhale LOGIN PASSWORD :'password';
CREATE DATABASE exhale OWNER exhale;
SQL
