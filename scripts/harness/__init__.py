"""What the benchmark, load, crash and fuzz scripts in scripts/ share: one module per job, so that a script imports
the harness and never another script, and each script's own file holds only its own measurement or check.

- postgres: a throwaway PostgreSQL (embedded, durability off) or the server of --database-url, and a database of
  the script's own on it, migrated and dropped; an outage of it (the embedded server restarted);
- inbound: customers' messages posted to the service's webhook as the platform delivers them, signed;
- workspace: the Scale workspace, admin and full-access key a script drives the service with;
- processes: a child process started and stopped (its ready line, its log), the service's command and
  environment, free ports, and a service started again after each SIGKILL;
- simulator: the platform simulator in a process of its own (simulator_with_model: with the AI agent's model
  beside it), its record of the sends it accepted, and the customer numbers it treats as ordinary;
- webhook_receiver: a fast receiver of the service's outbound webhooks in a process of its own;
- cluster: several nodes as a check's clients see them (the next node still up, a workspace's time out of service);
  postgres_restart, broadcast_failover and skewed_clock: scripts/cluster_check.py's modes of those names;
- balancer: HAProxy in front of a script's nodes, sending each workspace's requests to the node holding it;
- load_client: raw HTTP/1.1 load from worker processes; bare_app: the bare Hypercorn-trio app it is compared with;
- send_rig: the service, simulator and pg_stat_statements as the send benchmarks run them;
- meters: CPU time and RSS of processes, the machine's effective cores;
- figures: percentiles as the scripts print them;
- profiles: a py-spy profile broken down by layer;
- options and run: the command-line options the scripts share, and the main() they share (a temporary work
  directory, PostgreSQL, trio.run, Ctrl-C).

The scripts run as `python scripts/NAME.py`, which puts scripts/ first on sys.path: `import harness` finds this
package without installing it.
"""
