"""``dogood gallery``: a static HTML page of a built folder."""

from __future__ import annotations

import sys

from dogood.cli.common import count


def add_parser(sub) -> None:
    p = sub.add_parser("gallery", help="write a static HTML page of a built folder: originals beside shifted pages, "
                                       "boxes, statistics, the eval plot")
    p.add_argument("folder", metavar="OUT", help="a dataset folder `dogood build` wrote")
    p.add_argument("--docs", type=count, default=3, help="documents per config (default: 3)")
    p.add_argument("--html", help="the HTML file to write (default: OUT-gallery.html beside OUT; never inside OUT)")
    p.add_argument("--split", help="split to show (default: each config's first)")
    p.add_argument("--source", help="where the source data is, for the original pages")
    p.add_argument("--report", metavar="DIR", help="a `dogood eval` report folder to show (default: reports in "
                                                   "eval/*/ that scored OUT)")
    p.set_defaults(func=cmd_gallery)


def cmd_gallery(args) -> int:
    from dogood.share.gallery import write_gallery

    result = write_gallery(args.folder, args.html, docs=args.docs, split=args.split, source=args.source,
                           report=args.report)
    if result["originals"]:
        print(f"dogood: warning: original pages not shown: {result['originals']}", file=sys.stderr)
    reports = f", eval report(s) {', '.join(map(str, result['reports']))}" if result["reports"] else ""
    print(f"wrote {result['path']}: {result['documents']} document(s) in {len(result['configs'])} config(s){reports}")
    return 0
