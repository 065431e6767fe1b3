//! The report's one stylesheet (inline: the page fetches nothing).

/// Colours chosen for WCAG AA (≥ 4.5:1 for text) in light, dark and print.
pub const CSS: &str = "
body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
main{max-width:1100px;margin:0 auto;padding:24px;min-width:0}
header{background:#1d2430;color:#fff;padding:20px 24px}
header h1{margin:0 0 4px;font-size:24px}
header p{margin:2px 0;color:#d5dbe4;font-size:13px;overflow-wrap:anywhere}
header code{background:#2e3a4d;color:#ffffff}
section{background:#fff;border:1px solid #dde2ea;border-radius:8px;padding:16px 20px;margin:18px 0;min-width:0;overflow-wrap:anywhere}
h2{margin:0 0 8px;font-size:20px}
.question{font-weight:600}
.classic{color:#4f5661;font-style:italic}
pre{background:#f3f5f8;border-radius:6px;padding:10px;overflow-x:auto;font-size:12px;line-height:1.35;max-width:100%;box-sizing:border-box}
figure{margin:12px 0}
figure svg{max-width:100%;height:auto;border:1px solid #e5e8ee;border-radius:6px;background:#fff}
figcaption{font-size:13px;color:#4f5661}
.warn{background:#fff7e0;border-left:4px solid #b38600;padding:6px 10px;margin:6px 0;font-size:14px}
.fix{color:#3d3d3d}
.bad{background:#fde8e8;border-left:4px solid #c0392b;padding:6px 10px}
table.metrics{border-collapse:collapse;font-size:14px;max-width:100%}
table.metrics td,table.metrics th{border-bottom:1px solid #e5e8ee;padding:4px 10px;text-align:left}
table.data{border-collapse:collapse;font-size:13px;line-height:1.35;margin:8px 0;max-width:100%}
table.data th,table.data td{border-bottom:1px solid #e5e8ee;padding:3px 8px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
table.data th{font-weight:600;background:#f3f5f8}
table.data .num{text-align:right;font-variant-numeric:tabular-nums}
table.data td.num{white-space:nowrap}
table.figures td:first-child{min-width:14em}
section p{margin:4px 0}
section p.sub{margin:2px 0 2px 1.5em;font-size:14px;color:#3d4652}
details{margin:10px 0}
details>summary{cursor:pointer;font-weight:600;color:#1a56a8;padding:4px 0}
.grid{display:flex;flex-wrap:wrap;gap:8px 28px;align-items:flex-start}
.grid>table{flex:0 1 auto}
.grid>div.advice{flex:1 1 360px;min-width:0}
div.advice h3{margin:6px 0 4px}
ul.advice{padding-left:20px;margin:4px 0}
nav.toc{font-size:14px;margin:4px 0 0;line-height:1.8}
p.reproduce{font-size:13px}
code{background:#f3f5f8;padding:1px 5px;border-radius:4px;overflow-wrap:anywhere}
ul.advice li{margin:4px 0}
a{color:#1a56a8}
.evidence{font-size:13px}
@media (prefers-color-scheme: dark){
body{background:#11151b;color:#e6e9ee}
section{background:#1a2029;border-color:#2f3845}
pre,code{background:#242c38;color:#e6e9ee}
table.data th{background:#242c38}
table.data th,table.data td{border-bottom-color:#2f3845}
section p.sub{color:#c3cad4}
details>summary{color:#8ab4f8}
.classic,figcaption{color:#b9c1cc}
.warn{background:#3a3115;color:#f3e9c9;border-left-color:#e0a800}
.fix{color:#e2d8b8}
.bad{background:#3d1e1e;color:#f5dede}
table.metrics td,table.metrics th{border-bottom-color:#2f3845}
a{color:#8ab4f8}
figure svg{border-color:#2f3845}
}
@media (max-width:900px){
main{padding:10px 6px}
section{padding:12px 10px}
header{padding:14px 12px}
}
@media print{
details>summary{display:none}
body{background:#fff;color:#000;font-size:11pt}
header{background:#fff;color:#000;border-bottom:2px solid #000;padding:0 0 8px}
header p,header code{color:#000;background:#fff}
main{max-width:none;padding:0}
section{border:none;padding:0;break-inside:avoid-page}
pre{white-space:pre-wrap;background:#fff;border:1px solid #999}
figure{break-inside:avoid}
a{color:#000;text-decoration:none}
}
";
