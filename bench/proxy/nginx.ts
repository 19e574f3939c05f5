import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, startProcess, type Child } from './children';

/**
 * nginx as a bare reverse-proxy hop to the same upstream: no authentication, no limits, no
 * billing, one worker (Switchyard serves from one JavaScript thread). What any proxy costs on
 * this machine, so `vs nginx` says how much of Switchyard's cost is the hop itself.
 */

/** The nginx binary: $NGINX, else nginx on PATH or in the usual sbin folders; null when none. */
export function findNginx(): string | null {
  if (process.env.NGINX) return existsSync(process.env.NGINX) ? process.env.NGINX : null;
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), '/usr/sbin', '/usr/local/sbin', '/usr/local/nginx/sbin'];
  for (const dir of dirs) {
    const candidate = path.join(dir, 'nginx');
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

/**
 * Starts nginx in the foreground with its own prefix folder (removed at exit), in front of
 * `upstream`; `connections`: the most client connections at once.
 */
export async function startNginx(binary: string, upstream: string, connections = 2048): Promise<Child> {
  const up = new URL(upstream);
  const port = await freePort();
  const prefix = mkdtempSync(path.join(tmpdir(), 'bench-nginx-'));
  process.once('exit', () => rmSync(prefix, { recursive: true, force: true }));
  const temp = (name: string) => `${name}_temp_path ${path.join(prefix, name)};`;
  writeFileSync(path.join(prefix, 'nginx.conf'), `
worker_processes 1;
# One process, so its CPU time per request is the hop's whole cost.
master_process off;
daemon off;
pid ${path.join(prefix, 'nginx.pid')};
error_log stderr warn;
# Each client connection holds an upstream one, and connections kept alive from an earlier
# run still count: short of room, nginx closes idle ones, a new run's not-yet-used among them.
worker_rlimit_nofile ${4 * connections + 64};
events { worker_connections ${4 * connections + 64}; }
http {
  access_log off;
  ${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(temp).join('\n  ')}
  upstream lean { server ${up.hostname}:${up.port}; keepalive 64; }
  server {
    listen 127.0.0.1:${port} backlog=${connections};
    location / {
      proxy_pass http://lean;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      # Streamed answers pass through as they come, as Switchyard relays them.
      proxy_buffering off;
    }
  }
}
`);
  return startProcess('nginx', binary, ['-e', 'stderr', '-p', prefix, '-c', path.join(prefix, 'nginx.conf')], {}, new URL(`http://127.0.0.1:${port}`), 15_000);
}
