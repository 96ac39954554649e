import java.io.File;
import java.io.FileOutputStream;
import java.io.OutputStream;
import org.jacoco.core.analysis.Analyzer;
import org.jacoco.core.analysis.CoverageBuilder;
import org.jacoco.core.analysis.IBundleCoverage;
import org.jacoco.core.tools.ExecFileLoader;
import org.jacoco.report.DirectorySourceFileLocator;
import org.jacoco.report.IReportVisitor;
import org.jacoco.report.xml.XMLFormatter;

/** jacoco.exec + class dir + source dir -> XML report, the same calls jacococli's `report` makes. */
public class ReportXml {
    public static void main(String[] args) throws Exception {
        File exec = new File(args[0]), classes = new File(args[1]), sources = new File(args[2]);
        File xml = new File(args[3]);
        ExecFileLoader loader = new ExecFileLoader();
        loader.load(exec);
        CoverageBuilder builder = new CoverageBuilder();
        new Analyzer(loader.getExecutionDataStore(), builder).analyzeAll(classes);
        IBundleCoverage bundle = builder.getBundle("demo");
        try (OutputStream out = new FileOutputStream(xml)) {
            IReportVisitor visitor = new XMLFormatter().createVisitor(out);
            visitor.visitInfo(loader.getSessionInfoStore().getInfos(), loader.getExecutionDataStore().getContents());
            visitor.visitBundle(bundle, new DirectorySourceFileLocator(sources, "utf-8", 4));
            visitor.visitEnd();
        }
    }
}
