"""WebFetch's HTML conversion: in-process (as it ran before, in a thread) against the bounded child process.

Run: python bench/page_conversion.py [--page FILE.html] [--repeat 7]

Without --page, a ~200 KB documentation-like page is made (navigation, headings, paragraphs with links and
inline code, code blocks, lists, tables). Each round converts it in this process (`html_worker.to_markdown`,
its imports already loaded, as the second fetch of a session found them) and through `page_text.html_to_text`
(a child started per page: interpreter, bs4 and markdownify imports, the pipe both ways), interleaved; the
table shows medians. It also times the plain-text fallback and the hostile `<a <a <a …` page of the same size.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from agentcli.tools.web.html_worker import to_markdown
from agentcli.tools.web.page_text import html_to_text, plain_text


def make_page(size: int = 200_000) -> str:
    """A documentation-like page of about `size` characters."""
    nav = "".join(f'<li><a href="/docs/section-{i}.html">Section {i}</a></li>' for i in range(60))
    parts = [f"<!doctype html><html><head><title>Docs</title><style>body{{margin:0}}</style></head><body>"
             f"<nav><ul>{nav}</ul></nav><main>"]
    n = 0
    while sum(map(len, parts)) < size:
        n += 1
        parts.append(
            f'<section id="s{n}"><h2>Function <code>call_{n}</code></h2>'
            f'<p>Calls <a href="/api/{n}">the handler</a> with <em>care</em>; see <code>Options.retry</code> and '
            f'the <strong>notes</strong> below. It returns <code>None</code> when the input is empty.</p>'
            f'<pre><code class="language-python">def call_{n}(x: int) -&gt; int:\n    return x * {n}\n</code></pre>'
            f"<ul><li>first &amp; foremost</li><li>second, with <a href='#s{n}'>a link</a></li></ul>"
            f"<table><tr><th>name</th><th>value</th></tr><tr><td>a</td><td>{n}</td></tr></table></section>")
    parts.append("</main><script>console.log('x')</script></body></html>")
    return "".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--page", type=Path)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    page = args.page.read_text(errors="replace") if args.page else make_page()
    to_markdown("<p>warm</p>")  # the imports, paid once per session before
    before, after, plain = [], [], []
    for _ in range(args.repeat):
        started = time.perf_counter()
        to_markdown(page)
        before.append(time.perf_counter() - started)
        started = time.perf_counter()
        asyncio.run(html_to_text(page, 100_000))
        after.append(time.perf_counter() - started)
        started = time.perf_counter()
        plain_text(page)
        plain.append(time.perf_counter() - started)
    hostile = "<a " * (len(page) // 3)
    started = time.perf_counter()
    result = asyncio.run(html_to_text(hostile, 100_000))
    cut = time.perf_counter() - started
    print(f"page: {len(page):,} characters; medians of {args.repeat}")
    print(f"  in-process to_markdown (before)   {statistics.median(before) * 1000:7.0f} ms")
    print(f"  child html_to_text (now)          {statistics.median(after) * 1000:7.0f} ms")
    print(f"  plain_text fallback               {statistics.median(plain) * 1000:7.0f} ms")
    print(f"  hostile <a <a … of the same size  {cut * 1000:7.0f} ms (cut: {bool(result.notes)})")


if __name__ == "__main__":
    main()
