package demo;

public class RunTests {
    private static int failures = 0;

    private static void check(String name, boolean ok) {
        System.out.println((ok ? "PASS " : "FAIL ") + name);
        if (!ok) {
            failures++;
        }
    }

    public static void main(String[] args) {
        Calc calc = new Calc();
        check("add", calc.add(2, 3) == 5);
        check("sub", calc.sub(5, 3) == 2);
        check("div", calc.div(7, 2) == 3);
        check("max", calc.max(4, 1) == 4);
        check("clamp low", calc.clamp(-5, 0, 10) == 0);
        check("shout", Text.shout("hi").equals("HI!"));
        check("vowels", Text.countVowels("JaCoCo") == 3);
        System.out.println(failures == 0 ? "OK" : failures + " FAILED");
        System.exit(failures == 0 ? 0 : 1);
    }
}
