/* rlperf's additions to asv's graph page (asv 0.6.6); asv's own files are left as published.
 *
 * 1. A graph page opened without a selection (the grid's and the benchmark tree's links, a bare
 *    #benchmark URL) gets RLPERF_DEFAULTS[benchmark] as its selection before asv reads the URL:
 *    the hash is replaced in place (no history entry). A URL that selects anything is kept, and so is
 *    any change made on the page itself (a hash change that stays on the same benchmark).
 * 2. The main graph's legend goes into a column right of the plot (#rlperf-legend) and lists only the
 *    lines that have values, each without the label parts all of them share (asv leaves out what all
 *    selected series share, but counts series and points that draw nothing; the sidebar shows the
 *    selection): flot's legend options `container` and `labelFormatter`, set by a wrapper around
 *    $.plot for the main graph only.
 * 3. A grid thumbnail with a single value draws it as a dot: asv draws the grid with lines only, and a
 *    line needs two values, so a benchmark measured at one commit looked empty.
 */
(function () {
    'use strict';

    /* Hash keys that say how to draw, not what: a URL with only these still gets the defaults. */
    var VIEW_KEYS = ['y-axis-scale', 'x-axis-scale', 'show-legend', 'x-axis'];

    function location_of(hash) {
        return $.asv.parse_hash_string(hash).location.join('/');
    }

    /* The hash with its benchmark's default selection added, or null to keep it. */
    function with_defaults(hash) {
        var info = $.asv.parse_hash_string(hash);
        var defaults = RLPERF_DEFAULTS[info.location.join('/')];
        if (!defaults) {
            return null;
        }
        for (var key in info.params) {
            if (VIEW_KEYS.indexOf(key) == -1) {
                return null;
            }
        }
        $.each(defaults, function (key, values) {
            info.params[key] = values.slice();
        });
        return $.asv.format_hash_string(info);
    }

    function apply_defaults(old_url) {
        var hash = window.location.hash;
        if (old_url !== undefined && location_of(new URL(old_url).hash) === location_of(hash)) {
            return;  /* a change made on the page itself, e.g. every machine selected */
        }
        var target = with_defaults(hash);
        if (target !== null) {
            history.replaceState(history.state, '', target);
        }
    }

    function drawn(series) {
        for (var i = 0; i < series.data.length; ++i) {
            var point = series.data[i];
            if (point && point[1] !== null && point[1] !== undefined) {
                return true;
            }
        }
        return false;
    }

    /* The "key-value" parts of asv's labels ("a-1; b-2") that every drawn line has. */
    function shared_parts(data) {
        var shared = null;
        $.each(data, function (i, series) {
            if (!series.label || !drawn(series)) {
                return;
            }
            var parts = series.label.split('; ');
            shared = shared === null ? parts : shared.filter(function (p) { return parts.indexOf(p) != -1; });
        });
        return shared || [];
    }

    function legend_column() {
        var column = $('#rlperf-legend');
        if (!column.length) {
            column = $('<div id="rlperf-legend"/>').appendTo('#graph');
        }
        return column;
    }

    var asv_plot = $.plot;
    $.plot = $.extend(function (placeholder, data, options) {
        if ($(placeholder).is('#main-graph') && options && options.legend) {
            $('#graph').toggleClass('rlperf-legend-right', options.legend.show !== false);
            options.legend.container = legend_column();
            var label = options.legend.labelFormatter;
            var shared = shared_parts(data);
            options.legend.labelFormatter = function (text, series) {
                if (!drawn(series)) {
                    return null;
                }
                var own = text.split('; ').filter(function (p) { return shared.indexOf(p) == -1; });
                text = own.length ? own.join('; ') : text;
                return label ? label(text, series) : text;
            };
        }
        if ($(placeholder).is('.benchmark-plot') && options && options.series) {
            var values = [];
            var lonely = data.some(function (series) {
                var own = series.data.filter(function (p) { return p && p[1] !== null; });
                values = values.concat(own.map(function (p) { return p[1]; }));
                return own.length == 1;
            });
            if (lonely) {
                options.series.points = {show: true, radius: 3};
                if (values.length == 1 && values[0] > 0 && options.yaxis) {
                    options.yaxis.max = 2 * values[0];  /* mid-height, not clipped by the top edge */
                }
            }
        }
        return asv_plot(placeholder, data, options);
    }, asv_plot);

    /* After asv.js's ready handler ($.asv exists) and before index.json arrives (asv binds its own
       hashchange handler then, so this one runs first). */
    $(document).ready(function () {
        apply_defaults();
        $(window).on('hashchange', function (evt) {
            apply_defaults(evt.originalEvent.oldURL);
        });
    });
})();
