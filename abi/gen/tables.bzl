"""zlink_table: a binding's committed table and the test that it matches the header."""

def zlink_table(name, lang, table):
    """The test `name` fails when `table` (a committed file) differs from what
    abi/gen/tables.py --lang `lang` makes of the header's results.json and
    version script. tools/gen_tables.sh rewrites every table."""
    native.sh_test(
        name = name,
        size = "small",
        srcs = ["//abi/gen:check_table.sh"],
        args = [
            lang,
            "$(location %s)" % table,
            "$(location //abi/gen:tables.py)",
            "$(location //abi:results_json)",
            "$(location //abi:zlink.map)",
        ],
        data = [
            table,
            "//abi/gen:tables.py",
            "//abi/gen:emitters",
            "//abi:results_json",
            "//abi:zlink.map",
        ],
    )
