/** The report's cost section (docs/cost-model.md §8): shown for a priced scenario only, with its figures. */
import { htmlReport } from '../src/report/html-report';
import { reportFromGivenPlan } from '../src/report/report-data';
import { loadFixture, readPlanFixture } from './helpers/fixtures';

describe('the report\'s cost section', () => {
  const plan = readPlanFixture('llama3-405b-two-buildings');

  it('prices the GPUs per site and the link per direction', () => {
    const html = htmlReport(reportFromGivenPlan(loadFixture('llama3-405b-two-buildings-priced'), plan, 'plan.json'));
    // 8,192 GPUs at $2.50 and 8,192 at $2.20.
    expect(html).toContain('data-usd-per-hour="38502.4"');
    expect(html).toMatch(/<table id="cost-sites">.*<td>bldg-a<\/td><td class="num">8,192<\/td><td class="num">\$2\.50<\/td><td class="num">\$20,480<\/td>/);
    expect(html).toContain('bldg-a -&gt; bldg-b');
    // 15e12 tokens / (2,048 x 8,192) = 894,069.7: 894,070 iterations.
    expect(html).toContain('894,070 iterations');
  });

  it('is absent without prices', () => {
    const html = htmlReport(reportFromGivenPlan(loadFixture('llama3-405b-two-buildings'), plan, 'plan.json'));
    expect(html).not.toContain('<section id="cost">');
  });
});
