/**
 * `k8s.yaml`: a JobSet (jobset.x-k8s.io/v1alpha2) with one replicated job per site: an Indexed
 * Job whose completions are the site's nodes, one pod per node requesting its GPUs
 * (nvidia.com/gpu), pinned to the site by the node label `scaleacross.io/site`. Each pod runs the
 * site's torchrun script from the bundle (mounted from a ConfigMap) with its completion index as
 * the node index; the rendezvous is pod 0 of the rank-0 site, by its JobSet DNS name
 * (<jobset>-<replicated job>-<job index>-<pod index>.<subdomain>). Pure.
 */
import type { LaunchContext } from './launch-common';
import { rendezvousSite, torchrunFile } from './launch-common';
import { dnsLabel, oneLine } from './shell';

export const SITE_LABEL = 'scaleacross.io/site';

type Yaml = string | number | boolean | readonly Yaml[] | { readonly [key: string]: Yaml };

/** A label value for a site name (at most 63 characters of letters, digits, '-', '_', '.'; alphanumeric at both ends). */
export function siteLabelValue(name: string): string {
  const value = name.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 63).replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return value === '' ? 'site' : value;
}

export function kubernetesNames(ctx: LaunchContext): { jobSet: string; configMap: string; replicatedJobs: string[] } {
  const jobSet = dnsLabel(`scaleacross-${ctx.scenarioName}`, 24);
  const replicatedJobs = ctx.table.sites.map((s, k) => dnsLabel(`s${k}-${s.name}`, 20));
  return { jobSet, configMap: `${jobSet}-bundle`, replicatedJobs };
}

export function kubernetesManifest(ctx: LaunchContext): { path: string; content: string } {
  const { table } = ctx;
  const names = kubernetesNames(ctx);
  const master = rendezvousSite(table);
  const masterJob = names.replicatedJobs[table.sites.findIndex((s) => s.site === master.site)]!;
  const manifest: Yaml = {
    apiVersion: 'jobset.x-k8s.io/v1alpha2',
    kind: 'JobSet',
    metadata: { name: names.jobSet, labels: { 'app.kubernetes.io/name': names.jobSet, 'app.kubernetes.io/created-by': 'scaleacross' } },
    spec: {
      network: { enableDNSHostnames: true, publishNotReadyAddresses: true },
      failurePolicy: { maxRestarts: 0 },
      replicatedJobs: table.sites.map((site, k): Yaml => ({
        name: names.replicatedJobs[k]!,
        replicas: 1,
        template: {
          spec: {
            completionMode: 'Indexed',
            completions: site.nodes.length,
            parallelism: site.nodes.length,
            backoffLimit: 0,
            template: {
              metadata: { labels: { [SITE_LABEL]: siteLabelValue(site.name) } },
              spec: {
                restartPolicy: 'Never',
                nodeSelector: { [SITE_LABEL]: siteLabelValue(site.name) },
                containers: [{
                  name: 'trainer',
                  image: 'REPLACE-WITH-YOUR-TRAINING-IMAGE',
                  command: ['bash', `/bundle/${torchrunFile(table, site.site)}`],
                  env: [
                    { name: 'BUNDLE_DIR', value: '/bundle' },
                    { name: 'MASTER_ADDR', value: `${names.jobSet}-${masterJob}-0-0.${names.jobSet}` },
                    { name: 'MASTER_PORT', value: String(ctx.masterPort) },
                  ],
                  resources: {
                    requests: { 'nvidia.com/gpu': site.gpusPerNode },
                    limits: { 'nvidia.com/gpu': site.gpusPerNode },
                  },
                  volumeMounts: [
                    { name: 'bundle', mountPath: '/bundle' },
                    { name: 'dshm', mountPath: '/dev/shm' },
                  ],
                }],
                volumes: [
                  { name: 'bundle', configMap: { name: names.configMap } },
                  { name: 'dshm', emptyDir: { medium: 'Memory' } },
                ],
              },
            },
          },
        },
      })),
    },
  };
  const header = [
    `# JobSet for ${oneLine(ctx.scenarioName)}: one Indexed Job per site, one pod per node (see README.md).`,
    `# Before applying: label each node with its site (kubectl label node <node> ${SITE_LABEL}=<site>),`,
    `# create the bundle ConfigMap (kubectl create configmap ${names.configMap} --from-file=<bundle folder>),`,
    '# and set the image. Needs the JobSet controller installed in the cluster.',
  ];
  return { path: 'k8s.yaml', content: `${header.join('\n')}\n${toYaml(manifest, 0)}\n` };
}

/** Block-style YAML; strings as JSON double-quoted scalars (valid YAML) unless plainly safe. */
export function toYaml(value: Yaml, indent: number): string {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value)) {
    if (value.length === 0) return `${pad}[]`;
    return (value as readonly Yaml[]).map((item) => {
      if (isScalar(item)) return `${pad}- ${scalar(item)}`;
      const body = toYaml(item, indent + 2);
      return `${pad}- ${body.slice(indent + 2)}`;
    }).join('\n');
  }
  if (isScalar(value)) return `${pad}${scalar(value)}`;
  const entries = Object.entries(value as { readonly [key: string]: Yaml });
  if (entries.length === 0) return `${pad}{}`;
  return entries.map(([key, item]) => {
    const k = scalar(key);
    if (isScalar(item)) return `${pad}${k}: ${scalar(item)}`;
    if (Array.isArray(item) && item.length === 0) return `${pad}${k}: []`;
    if (!Array.isArray(item) && Object.keys(item).length === 0) return `${pad}${k}: {}`;
    return `${pad}${k}:\n${toYaml(item, indent + 2)}`;
  }).join('\n');
}

const isScalar = (value: Yaml): value is string | number | boolean => typeof value !== 'object';

function scalar(value: string | number | boolean): string {
  if (typeof value !== 'string') return String(value);
  const plain = /^[A-Za-z_/][A-Za-z0-9_./-]*$/.test(value) && !/^(true|false|yes|no|on|off|null|y|n|~)$/i.test(value);
  return plain ? value : JSON.stringify(value);
}
