/* svg_script.h - the script embedded in heapinject's SVG flame graphs. */
#ifndef HI_CLI_REPORT_SVG_SCRIPT_H
#define HI_CLI_REPORT_SVG_SCRIPT_H

/* ECMAScript for a CDATA section: hover details, click to zoom, search.
 * It reads the frames' data-* attributes written by cli/report/svg.c. */
extern const char cli_svg_script[];

#endif /* HI_CLI_REPORT_SVG_SCRIPT_H */
