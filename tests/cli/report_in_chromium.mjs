// Opens a cudalens report in Chromium through playwright-core and prints what a person would see: each chart's
// drawn size and elements, its texts, the coloured heat-strip cells, every request the page made.
// node report_in_chromium.mjs PAGE.html SCREENSHOT.png /usr/bin/chromium   (NODE_PATH: vscode-client/node_modules)
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const [page, screenshot, executablePath] = process.argv.slice(2);

const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
});
try {
  const tab = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const requests = [];
  tab.on("request", (r) => requests.push(r.url()));
  await tab.goto(pathToFileURL(page).href, { waitUntil: "load" });
  const charts = await tab.evaluate(() => {
    const out = {};
    for (const div of document.querySelectorAll("div.chart")) {
      const svg = div.querySelector("svg");
      const box = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
      out[div.id] = {
        width: box.width,
        height: box.height,
        paths: svg ? svg.querySelectorAll("path").length : 0,
        rects: svg ? svg.querySelectorAll("rect").length : 0,
        texts: svg ? [...svg.querySelectorAll("text")].map((t) => t.textContent.trim()) : [],
      };
    }
    return out;
  });
  const heatCells = await tab.evaluate(
    () => [...document.querySelectorAll("td.heat")].filter((td) => getComputedStyle(td).backgroundColor !== "rgba(0, 0, 0, 0)").length,
  );
  await tab.screenshot({ path: screenshot, fullPage: false });
  console.log(JSON.stringify({ charts, heatCells, requests }));
} finally {
  await browser.close();
}
