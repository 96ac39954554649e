package demo;

public class Text {
    public static String shout(String s) {
        if (s == null || s.isEmpty()) {
            return "";
        }
        return s.toUpperCase() + "!";
    }

    public static int countVowels(String s) {
        int n = 0;
        for (char c : s.toLowerCase().toCharArray()) {
            switch (c) {
                case 'a':
                case 'e':
                case 'i':
                case 'o':
                case 'u':
                    n++;
                    break;
                default:
                    break;
            }
        }
        return n;
    }

    public static String reverse(String s) {
        return new StringBuilder(s).reverse().toString();
    }
}
