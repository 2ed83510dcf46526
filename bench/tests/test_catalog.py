"""catalog.tsv is the one list of the lab's apps (issue 49): the planners' default variants and APPS' default
come from it, and a model added as one line there (a toy catalog here) is in every default that names it, with
no other file edited. The Makefile and Ansible read it through bench/tools/catalog.sh.

Run: PYTHONPATH=bench python3 -m unittest discover -s bench/tests -t bench -p test_catalog.py
"""
import subprocess
import tempfile
import unittest
from pathlib import Path

from labbench import catalog, settings
from labbench.paths import ROOT

TOY = "toy-model\tsync-servlet\tsync\tyes\tjetty,tomcat\tcall\tjdk\tnone\tsweep:4 degrade@tomcat:4\ta toy model\n"


class CatalogTest(unittest.TestCase):

    def test_each_planner_s_default_is_the_catalog_s_variants_column(self):
        for planner in ("sweep", "cost", "degrade"):
            with self.subTest(planner=planner):
                default = catalog.default_variants(planner).split()
                self.assertTrue(default)
                self.assertEqual(default, [f"{a.app}{v[len(planner):]}" for a in catalog.APPS.values()
                                           for v in a.variants if v.split("@")[0].split(":")[0] == planner])
        self.assertEqual(settings.CORE_DEFAULTS["APPS"].split(), catalog.apps_for("call"))

    def test_a_model_is_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d, "catalog.tsv")
            path.write_text(catalog.FILE.read_text() + TOY)
            saved = dict(catalog.APPS)
            self.addCleanup(lambda: (catalog.APPS.clear(), catalog.APPS.update(saved)))
            catalog.APPS.clear()
            catalog.APPS.update(catalog.load(path))
            self.assertIn("toy-model:4", catalog.default_variants("sweep").split())
            self.assertIn("toy-model@tomcat:4", catalog.default_variants("degrade").split())
            self.assertNotIn("toy-model", catalog.default_variants("cost"))
            self.assertIn("toy-model", catalog.apps_for("call"))

    def test_the_makefile_and_ansible_read_the_modules_from_it(self):
        out = subprocess.run([ROOT / "bench/tools/catalog.sh", "modules", "call"], capture_output=True, text=True, check=True)
        self.assertEqual(out.stdout.split(), sorted({catalog.APPS[a].module for a in catalog.apps_for("call")}))
        bad = subprocess.run([ROOT / "bench/tools/catalog.sh", "apps"], capture_output=True, text=True)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("ERROR: ", bad.stderr)
        self.assertIn("Usage: ", bad.stderr)


if __name__ == "__main__":
    unittest.main()
