// validate.mjs — the Kubernetes manifests of a Markdown file (its ```yaml
// blocks), parsed with npm `yaml` and each checked against the Kubernetes
// API's schema by npm `kubernetes-models` (its classes' validate(), the
// OpenAPI schema of each kind). Run from the folder holding their
// node_modules (tests/e2e/test_kubernetes.py copies it there).
// Usage: node validate.mjs FILE.md
// Prints "valid KIND NAME" per object, then their JSON on the last line;
// exits 1 naming the first object that fails (or a kind it does not know).
import fs from 'node:fs';
import YAML from 'yaml';
import {Pod} from 'kubernetes-models/v1';
import {DaemonSet} from 'kubernetes-models/apps/v1';

const kinds = {'v1 Pod': Pod, 'apps/v1 DaemonSet': DaemonSet};
const text = fs.readFileSync(process.argv[2], 'utf8');
const blocks = [...text.matchAll(/^```yaml\n([\s\S]*?)^```/gm)].map((m) => m[1]);
const objects = [];
for (const block of blocks) {
  for (const doc of YAML.parseAllDocuments(block)) {
    if (doc.errors.length) {
      console.error('YAML: ' + doc.errors.map((e) => e.message).join('; '));
      process.exit(1);
    }
    const obj = doc.toJS();
    const Kind = kinds[obj.apiVersion + ' ' + obj.kind];
    if (!Kind) {
      console.error('no schema here for ' + obj.apiVersion + ' ' + obj.kind);
      process.exit(1);
    }
    try {
      new Kind(obj).validate();
    } catch (e) {
      console.error('invalid ' + obj.kind + ' ' + obj.metadata.name + ': ' + e.message);
      process.exit(1);
    }
    console.log('valid ' + obj.kind + ' ' + obj.metadata.name);
    objects.push(obj);
  }
}
console.log(JSON.stringify(objects));
