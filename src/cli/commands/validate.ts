/** `scaleacross validate <scenario.json>`: checks a scenario and summarises it. */
import { loadScenario } from '../../index';
import { resolveCalibration } from '../calibration-option';
import { EXIT, type Output } from '../exit-codes';

export function runValidate(file: string, json: boolean, output: Output): number {
  const scenario = loadScenario(file);
  const gpus = scenario.sites.reduce((sum, site) => sum + site.gpus, 0);
  // A profile the scenario names must exist and be valid too.
  const calibration = resolveCalibration(undefined, file, scenario);
  if (json) {
    output.out(JSON.stringify({ valid: true, name: scenario.name, sites: scenario.sites.length, links: scenario.links.length, gpus, ...(calibration ? { calibration: calibration.file } : {}) }, null, 2));
  } else {
    const sites = scenario.sites.map((site) => `${site.name} (${site.gpus} x ${site.gpu.name})`).join(', ');
    output.out(`${file}: valid. ${scenario.name}: ${scenario.model.name} on ${gpus} GPUs at ${scenario.sites.length} site(s): ${sites}; ${scenario.links.length} link(s).${calibration ? ` Calibration profile: ${calibration.file}.` : ''}`);
  }
  return EXIT.ok;
}
