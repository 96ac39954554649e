package demo;
import static org.junit.Assert.assertEquals;
import org.junit.Ignore;
import org.junit.Test;
public class CalcTest {
    @Test public void adds() { assertEquals(5, new Calc().add(2, 3)); }
    @Test public void subtracts() { assertEquals(1, new Calc().sub(3, 2)); }
    @Test public void divides() { int z = 0; assertEquals(1, 1 / z); }
    @Ignore @Test public void skipped() { }
}
