# html.mk - the HTML report's viewer as C strings in
# build/gen/cli/html/assets.h, made with od and sed (no new tool): the
# scripts, in this order, as one (cli_html_viewer_js: one function scope,
# viewer.js last, it runs the page), and the style (cli_html_viewer_css).
HTML_JS := cli/html/model.js cli/html/flame.js cli/html/tables.js cli/html/census.js cli/html/diff.js \
           cli/html/viewer.js
HTML_CSS := cli/html/viewer.css

define html_c_string # name, files
	echo "static const char $(1)[] = {"; \
	cat $(2) | od -An -v -tx1 | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	echo '0x00 };'
endef

$(BUILD)/gen/cli/html/assets.h: $(HTML_JS) $(HTML_CSS) mk/html.mk
	@mkdir -p $(dir $@)
	@{ echo '/* generated from the scripts and style of cli/html by mk/html.mk */'; \
	  printf '(function () {\n"use strict";\n' >$@.js; cat $(HTML_JS) >>$@.js; printf '})();\n' >>$@.js; \
	  $(call html_c_string,cli_html_viewer_js,$@.js); \
	  $(call html_c_string,cli_html_viewer_css,$(HTML_CSS)); } > $@.tmp && rm -f $@.js && mv $@.tmp $@

$(BUILD)/obj/cli/html/page.o: $(BUILD)/gen/cli/html/assets.h

# make bench-html: `make bench`'s html section alone (page size and time to
# draw in headless Chromium for 1,000 and 100,000 stacks; bench/run.py).
.PHONY: bench-html
bench-html: all $(BUILD)/bench/stacks_workload
	@python3 bench/run.py html
